"""CRDs from disk: one YAML file (possibly multi-document, or a `List`) or a directory of them."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from .. import yamlio
from ..problems import KrcError, Location

_SUFFIXES = (".yaml", ".yml", ".json")


def _crds_in(data: Any) -> list[dict[str, Any]]:
    if not isinstance(data, dict):
        return []
    if data.get("kind") == "CustomResourceDefinition":
        return [data]
    if data.get("kind") == "List" or (data.get("kind") or "").endswith("List"):
        return [item for entry in data.get("items") or () for item in _crds_in(entry)]
    return []


@functools.lru_cache(maxsize=64)
def _crds_in_file(path: str, size: int, mtime_ns: int) -> tuple[dict[str, Any], ...]:
    # parsed once per process while the file is unchanged: CRD files are megabytes of YAML.
    # The dicts are shared between callers, who must not modify them (the validator never does).
    text = Path(path).read_text(encoding="utf-8")
    return tuple(crd for document in yamlio.load_all(text, path) for crd in _crds_in(document))


def load_crds_from_path(path: Path | str) -> list[dict[str, Any]]:
    """Every CustomResourceDefinition in a file, or in the *.yaml/*.yml/*.json files of a directory (sorted,
    recursively); other documents are skipped. Finding none is an error: the path is likely wrong."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _SUFFIXES)
    elif path.is_file():
        files = [path]
    else:
        raise KrcError(f"{path} does not exist; give a CRD file or a directory of CRD files")
    crds: list[dict[str, Any]] = []
    for file in files:
        try:
            stat = file.stat()
            crds.extend(_crds_in_file(str(file), stat.st_size, stat.st_mtime_ns))
        except (OSError, UnicodeDecodeError) as err:
            raise KrcError(f"cannot read {file} ({err}); check the file", Location(str(file))) from None
    if not crds:
        raise KrcError(f"no CustomResourceDefinition found in {path}; point at the CRD files", Location(str(path)))
    return crds
