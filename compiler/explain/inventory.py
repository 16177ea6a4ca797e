"""What `krc envs`, `krc show` and `krc --version` report: facts about one environment or about krc itself."""
from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

from .. import __version__
from ..diagnostics.problems import KrcError
from ..environment.model import Environment
from ..native import binary
from ..render.templates import Render


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


def deployed_documents(render: Render, crds: bool = False) -> list[dict[str, object]]:
    """Everything the environment deploys, in the order golden/ lists it: the templates' objects, then the
    operator chart's objects (what Helm makes of the pinned chart), then, with `crds`, the chart's CRDs. Every
    command that counts objects counts these (CRDs apart)."""
    documents: list[dict[str, object]] = [o.document for o in (*render.objects, *render.chart_objects)]
    if crds:
        documents += [crd.document for crd in render.chart.crds]
    return documents


def object_count(render: Render) -> int:
    """The objects the environment deploys, CRDs apart: what `krc render`, `krc diff` and `krc show` count."""
    return len(render.objects) + len(render.chart_objects)


SHORT_KINDS = {"crd": "customresourcedefinition"}  # kubectl's short name


def wanted_kind(kind: str) -> str:
    """A kind as `--kind` matches it: case-insensitive, plural or singular, `crd` for CustomResourceDefinition."""
    kind = kind.lower().removesuffix("s")
    return SHORT_KINDS.get(kind, kind)


def _kind_of(document: dict[str, object]) -> str:
    return wanted_kind(str(document.get("kind", "")))


def select_objects(render: Render, kinds: tuple[str, ...], crds: bool = False) -> list[dict[str, object]]:
    """The objects the environment deploys (deployed_documents), optionally only some kinds (case-insensitive;
    plural or singular)."""
    wanted = {wanted_kind(k) for k in kinds}
    return [d for d in deployed_documents(render, crds) if not wanted or _kind_of(d) in wanted]


def known_kinds(render: Render, crds: bool = False) -> list[str]:
    return sorted({str(d.get("kind")) for d in deployed_documents(render, crds)})


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
    return [("krc", __version__), ("Jinja2", _package_version("Jinja2")),
            ("Jsonnet", f"go-jsonnet {_package_version('gojsonnet')}"), *engine_versions()]
