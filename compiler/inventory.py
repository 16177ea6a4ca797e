"""What `krc envs`, `krc show` and `krc --version` report: facts about one environment or about krc itself."""
from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

from .environment.model import Environment
from .native import binary
from .problems import KrcError
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


def engine_versions() -> list[tuple[str, str]]:
    """The engine's build and the upstream modules inside it, as (name, version)."""
    try:
        path, digest, modules = binary.build_facts()
    except KrcError as err:
        return [("engine", str(err).removeprefix("krc: error: "))]
    kubernetes = ", ".join(f"{m.removeprefix('k8s.io/')} {modules[m]}" for m in
                           ("k8s.io/apiextensions-apiserver", "k8s.io/client-go") if modules.get(m))
    found = [("engine", f"{path} (sha256 {digest[:12]}, {modules.get('go') or 'go ?'})"),
             ("Helm", f"{modules.get('helm.sh/helm/v4') or '?'} (Helm SDK in the engine)"),
             ("Kubernetes", kubernetes or "?")]
    if modules.get("github.com/google/cel-go"):
        found.append(("CEL", f"cel-go {modules['github.com/google/cel-go']}"))
    if modules.get("cuelang.org/go"):
        found.append(("CUE", f"{modules['cuelang.org/go']} (cuelang.org/go in the engine)"))
    return found


def tool_versions() -> list[tuple[str, str]]:
    """krc and every engine it runs, as (name, version)."""
    return [("krc", _package_version("krc")), ("Jinja2", _package_version("Jinja2")),
            ("Jsonnet", f"go-jsonnet {_package_version('gojsonnet')}"), *engine_versions()]
