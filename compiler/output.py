"""The write stage: lay out an environment's render as files, and replace a folder atomically.

rendered/<env>/                          golden/<env>/  (committed; the same minus crds/)
  manifests/<kind>-<name>.yaml             one file per object; <kind>-<namespace>-<name>.yaml on a clash
  chart/<kind>-<name>.yaml                 the operator chart's objects as `helm template` renders them
  helm/kuberay-operator.values.yaml        the operator chart's values
  crds.lock.yaml                           per CRD: name, chart version, sha256 of its canonical form, versions
  crds/<crd name>.yaml                     the pinned chart's CRDs as shipped (rendered only, never golden)
"""
from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from . import yamlio
from .charts.package import Chart
from .render import Render

VALUES_FILE = "helm/kuberay-operator.values.yaml"
CRD_LOCK_FILE = "crds.lock.yaml"
MANIFESTS_DIR = "manifests"
CHART_DIR = "chart"
OBJECT_DIRS = (MANIFESTS_DIR, CHART_DIR)  # folders of one object per file, reviewed object by object
CRDS_DIR = "crds"

Files = dict[str, bytes]  # relative posix path -> content


def manifest_names(documents: list[dict[str, Any]], folder: str = MANIFESTS_DIR) -> list[str]:
    """Predictable file names: kind and name, plus the namespace only where two objects would clash."""
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
    return environment_files([o.document for o in render.objects], render.helm_values, render.chart, include_crds,
                             [o.document for o in render.chart_objects])


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
    """crds/: the pinned chart's CRDs as shipped (rendered/ only)."""
    return {f"{CRDS_DIR}/{crd.name}.yaml": crd.text.encode("utf-8") for crd in chart.crds}


def read_tree(folder: Path) -> Files:
    """Every file below `folder` (an absent folder reads as empty), sorted by path. os.scandir, not Path.rglob:
    `krc check` and `krc diff` read hundreds of golden folders and pathlib's overhead was most of their time."""
    if not folder.is_dir():
        return {}
    files: Files = {}

    def walk(directory: str, prefix: str) -> None:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir():
                    walk(entry.path, f"{prefix}{entry.name}/")
                elif entry.is_file():
                    with open(entry.path, "rb") as handle:
                        files[prefix + entry.name] = handle.read()

    walk(str(folder), "")
    return dict(sorted(files.items()))


def stage_tree(target: Path, files: Files) -> Path:
    """Write one folder in full beside `target` (not yet in place); `commit_staged` swaps it in."""
    target.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.new-"))
    try:
        for relative, content in files.items():
            path = stage / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        os.chmod(stage, 0o755)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return stage


def discard_staged(staged: list[tuple[Path, Path]]) -> None:
    for _, stage in staged:
        shutil.rmtree(stage, ignore_errors=True)


def commit_staged(staged: list[tuple[Path, Path]]) -> None:
    """Swap every staged folder into place: call only once everything was staged."""
    for target, stage in staged:
        old = None
        if target.exists():
            old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.old-"))
            os.rmdir(old)
            os.replace(target, old)
        os.replace(stage, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def replace_trees(trees: dict[Path, Files]) -> None:
    """Write every folder in full beside its target, then swap each into place.

    Everything is written before anything is replaced, so a failure leaves the old folders untouched.
    """
    staged: list[tuple[Path, Path]] = []
    try:
        for target, files in trees.items():
            staged.append((target, stage_tree(target, files)))
    except BaseException:
        discard_staged(staged)
        raise
    commit_staged(staged)


def replace_file(path: Path, content: bytes) -> None:
    """Write one file beside its target, then swap it into place (readers see the old or the new file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, stage = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.new-")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content)
        os.chmod(stage, 0o644)
        os.replace(stage, path)
    except BaseException:
        Path(stage).unlink(missing_ok=True)
        raise
