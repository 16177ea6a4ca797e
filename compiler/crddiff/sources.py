"""Where the CRDs to compare come from: a file, a directory, a chart archive, or NAME@VERSION from a repository.

Chart archives are read here rather than with `charts.package.read_chart`, which also parses values and
templates with the position-keeping loader; comparing CRDs needs only `crds/`, parsed with the fast loader.
"""
from __future__ import annotations

import hashlib
import io
import re
import tarfile
from pathlib import Path

from ..charts import repository, vendor
from ..problems import KrcError
from .crd_yaml import load_crd_documents

# KubeRay's published Helm repository; KRC_CHART_REPOSITORY overrides it (for mirrors and tests)
DEFAULT_REPOSITORY = "https://ray-project.github.io/kuberay-helm/"
_CHART_REFERENCE = re.compile(r"^(?P<name>[a-z0-9][a-z0-9._-]*)@(?P<version>[0-9A-Za-z][0-9A-Za-z.+_-]*)$")
_YAML_SUFFIXES = (".yaml", ".yml", ".json")


def _crds_in(text: str, source: str) -> list[dict]:
    return [doc for doc in load_crd_documents(text, source)
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition"]


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise KrcError(f"cannot read {path} ({err}); check the path and that it is UTF-8 YAML") from None


def crds_from_archive(data: bytes, origin: str) -> list[dict]:
    """The CRDs a packaged chart ships in its `crds/` directory, in file-name order."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            members = {m.name: m for m in tar.getmembers() if m.isfile()}
            roots = {name.split("/", 1)[0] for name in members}
            if len(roots) != 1:
                raise KrcError(f"{origin} does not hold exactly one chart directory; is it a Helm chart archive?")
            prefix = f"{roots.pop()}/crds/"
            crds: list[dict] = []
            for name in sorted(n for n in members if n.startswith(prefix) and n.endswith(_YAML_SUFFIXES)):
                text = tar.extractfile(members[name]).read().decode("utf-8")  # type: ignore[union-attr]
                crds.extend(_crds_in(text, f"{origin}:{name}"))
            return crds
    except (tarfile.TarError, OSError, UnicodeDecodeError) as err:
        raise KrcError(f"{origin} is not a readable chart archive ({err}); give a .tgz made by 'helm package'") \
            from None


def _crds_from_files(files: list[Path], origin: Path) -> list[dict]:
    crds: list[dict] = []
    for file in files:
        crds.extend(_crds_in(_read_text(file), str(file)))
    if not crds:
        raise KrcError(f"no CustomResourceDefinition found in {origin}; give CRD YAML files, a chart .tgz "
                       "or NAME@VERSION")
    return crds


def _vendored_archive(project_root: Path | None, name: str, version: str) -> bytes | None:
    """The vendored chart when it is present and matches its lock entry; None when there is none to use."""
    if project_root is None:
        return None
    vendor_dir = project_root / "vendor"
    path = vendor.archive_path(vendor_dir, name, version)
    locked = vendor.read_lock(vendor_dir).get((name, version))
    if locked is None or not path.is_file():
        return None
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != locked:
        raise KrcError(f"{path} does not match its locked digest sha256:{locked}; delete it and run 'krc vendor'")
    return data


def _crds_from_repository(name: str, version: str, project_root: Path | None) -> list[dict]:
    data = _vendored_archive(project_root, name, version)
    origin = f"{name}@{version} (vendored)"
    if data is None:
        entry = repository.find_chart(repository.effective_repository(DEFAULT_REPOSITORY), name, version)
        data = repository.download(entry)
        origin = entry.url
    return crds_from_archive(data, origin)


def load_crd_source(spec: str, project_root: Path | None) -> list[dict]:
    """The CRDs named by a command-line argument: a CRD file, a directory of them (searched recursively),
    a chart `.tgz`, or `NAME@VERSION` (the vendored copy under `<project_root>/vendor/charts/` when locked,
    else the chart repository, `KRC_CHART_REPOSITORY` or KubeRay's)."""
    path = Path(spec)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _YAML_SUFFIXES)
        return _crds_from_files(files, path)
    if path.is_file():
        if path.name.endswith((".tgz", ".tar.gz")):
            try:
                data = path.read_bytes()
            except OSError as err:
                raise KrcError(f"cannot read {path} ({err.strerror}); check the path") from None
            return crds_from_archive(data, str(path))
        return _crds_from_files([path], path)
    reference = _CHART_REFERENCE.match(spec)
    if reference:
        return _crds_from_repository(reference["name"], reference["version"], project_root)
    raise KrcError(f"'{spec}' is not a file, a directory or NAME@VERSION; give a CRD file, a directory of CRDs, "
                   "a chart .tgz or e.g. kuberay-operator@1.7.0")
