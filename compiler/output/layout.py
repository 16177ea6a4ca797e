"""The write stage's layout: an environment's render as the files of rendered/<env>/ and golden/<env>/.

rendered/<env>/                          golden/<env>/  (committed; the same minus crds/)
  manifests/<kind>-<name>.yaml             one file per object; <kind>-<namespace>-<name>.yaml on a clash
  chart/<kind>-<name>.yaml                 the operator chart's objects as `helm template` renders them
  helm/kuberay-operator.values.yaml        the operator chart's values
  crds.lock.yaml                           per CRD: name, chart version, sha256 of its canonical form, versions
  crds/<crd name>.yaml                     the pinned chart's CRDs as shipped (rendered only, never golden)
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..charts.package import Chart
from ..diagnostics.problems import KrcError
from ..documents import yamlio
from ..k8s.names import file_name_problem
from ..k8s.objects import RenderedObject
from ..project.paths import shown_name
from ..render.templates import Render
from .folders import Files

VALUES_FILE = "helm/kuberay-operator.values.yaml"
CRD_LOCK_FILE = "crds.lock.yaml"
MANIFESTS_DIR = "manifests"
CHART_DIR = "chart"
OBJECT_DIRS = (MANIFESTS_DIR, CHART_DIR)  # folders of one object per file, reviewed object by object
CRDS_DIR = "crds"


def manifest_names(documents: list[dict[str, Any]], folder: str = MANIFESTS_DIR) -> list[str]:
    """Predictable file names: kind and name, plus the namespace only where two objects would clash."""
    for doc in documents:
        meta = doc.get("metadata") or {}
        problem = file_name_problem(doc.get("kind"), meta.get("name"), meta.get("namespace"))
        if problem:
            raise KrcError(f"{problem}; fix the template or the environment value it reads")

    def short(doc: dict[str, Any]) -> str:
        return f"{doc['kind'].lower()}-{doc['metadata']['name']}"

    counts = Counter(short(d) for d in documents)
    names = []
    for doc in documents:
        base = short(doc)
        if counts[base] > 1:
            namespace = doc["metadata"].get("namespace") or "cluster"
            base = f"{doc['kind'].lower()}-{namespace}-{doc['metadata']['name']}"
        names.append(f"{folder}/{base}.yaml")
    return names


def crd_lock(chart: Chart) -> dict[str, Any]:
    return {
        "chart": chart.name,
        "version": chart.version,
        "crds": [{"name": c.name, "kind": c.kind, "sha256": c.sha256(),
                  "servedVersions": list(c.served_versions), "storageVersion": c.storage_version}
                 for c in chart.crds],
    }


def render_files(render: Render, include_crds: bool) -> Files:
    """The files of one environment's render, as `krc render` (with CRDs) or `krc golden` (without) lays them out."""
    return objects_files(render.objects, render.helm_values, render.chart, render.chart_objects, include_crds)


def objects_files(objects: Sequence[RenderedObject], helm_values: dict[str, Any], chart: Chart,
                  chart_objects: Sequence[RenderedObject], include_crds: bool) -> Files:
    """render_files of what a render made (its objects, Helm values and the chart's objects), as a cached result
    holds them."""
    return environment_files([o.document for o in objects], helm_values, chart, include_crds,
                             [o.document for o in chart_objects])


def environment_files(documents: list[dict[str, Any]], helm_values: dict[str, Any], chart: Chart,
                      include_crds: bool, chart_documents: list[dict[str, Any]] | None = None) -> Files:
    files: Files = {}
    for name, doc in zip(manifest_names(documents), documents, strict=True):
        files[name] = yamlio.dump(doc).encode("utf-8")
    chart_documents = chart_documents or []
    for name, doc in zip(manifest_names(chart_documents, CHART_DIR), chart_documents, strict=True):
        files[name] = yamlio.dump(doc).encode("utf-8")
    files[VALUES_FILE] = yamlio.dump(helm_values).encode("utf-8")
    files[CRD_LOCK_FILE] = yamlio.dump(crd_lock(chart)).encode("utf-8")
    if include_crds:
        files.update(crd_files(chart))
    return dict(sorted(files.items()))


def crd_files(chart: Chart) -> Files:
    """crds/: the pinned chart's CRDs as shipped (rendered/ only); a CRD name becomes a file name only when valid."""
    for crd in chart.crds:
        if file_name_problem("CustomResourceDefinition", crd.name):
            raise KrcError(f"the chart's CRD '{shown_name(crd.name)}' has no valid name; use the published chart")
    return {f"{CRDS_DIR}/{crd.name}.yaml": crd.shipped_bytes for crd in chart.crds}
