"""Where the CRDs to compare come from: a file, a directory, a chart archive, or NAME@VERSION from a repository.

Chart archives are read with `charts.package`, which parses a chart's CRDs once per archive digest.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..charts import package, repository, vendor
from ..diagnostics.problems import KrcError
from ..k8s.crds import load_crds_from_path

# KubeRay's published Helm repository; KRC_CHART_REPOSITORY overrides it (for mirrors and tests)
DEFAULT_REPOSITORY = repository.KUBERAY_REPOSITORY
_CHART_REFERENCE = re.compile(r"^(?P<name>[a-z0-9][a-z0-9._-]*)@(?P<version>[0-9A-Za-z][0-9A-Za-z.+_-]*)$")


def crds_from_archive(data: bytes, origin: str) -> list[dict[str, Any]]:
    """The CRDs a packaged chart ships in its `crds/` directory, in name order (parsed once per chart digest)."""
    return [crd.document for crd in package.read_chart_once(data, origin).crds]


def chart_crd_records(name: str, version: str, project_root: Path | None) -> tuple[package.Crd, ...]:
    """The chart's CRDs as records (each with its digest, worked out once per chart): the vendored chart when the
    project has it locked, else the chart repository."""
    vendor_dir = project_root / "vendor" if project_root is not None else None
    return vendor.vendored_or_downloaded(vendor_dir, name, version, DEFAULT_REPOSITORY).crds


def _crds_from_repository(name: str, version: str, project_root: Path | None) -> list[dict[str, Any]]:
    return [crd.document for crd in chart_crd_records(name, version, project_root)]


def load_crd_source(spec: str, project_root: Path | None) -> list[dict[str, Any]]:
    """The CRDs named by a command-line argument: a CRD file, a directory of them (searched recursively),
    a chart `.tgz`, or `NAME@VERSION` (the vendored copy under `<project_root>/vendor/charts/` when locked,
    else the chart repository, `KRC_CHART_REPOSITORY` or KubeRay's)."""
    path = Path(spec)
    if path.is_dir():
        return load_crds_from_path(path)
    if path.is_file():
        if path.name.endswith((".tgz", ".tar.gz")):
            try:
                data = path.read_bytes()
            except OSError as err:
                raise KrcError(f"cannot read {path} ({err.strerror}); check the path") from None
            return crds_from_archive(data, str(path))
        return load_crds_from_path(path)
    reference = _CHART_REFERENCE.fullmatch(spec)
    if reference:
        return _crds_from_repository(reference["name"], reference["version"], project_root)
    raise KrcError(f"'{spec}' is not a file, a directory or NAME@VERSION; give a CRD file, a directory of CRDs, "
                   "a chart .tgz or e.g. kuberay-operator@1.7.0")
