"""CustomResourceDefinitions from files: the one loader (a file, a `List`, or a directory of YAML/JSON files)
and the one digest (sha256 of the canonical form) every part of krc uses."""
from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

from .. import jsontext
from ..diagnostics.problems import KrcError, Location
from ..documents import yamlio

CRD_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def canonical_json(document: Any) -> str:
    """The canonical form of a document: insensitive to key order, comments and whitespace."""
    return jsontext.canonical(document, default=str)


def crd_digest(document: Any) -> str:
    """The sha256 of a CRD's canonical form: what crds.lock.yaml records and what approvals name."""
    return hashlib.sha256(canonical_json(document).encode("utf-8")).hexdigest()


def crds_in(document: Any) -> list[dict[str, Any]]:
    """The CRDs a YAML document holds: itself, or the items of a `List` (kubectl's `*List` kinds too)."""
    if not isinstance(document, dict):
        return []
    if document.get("kind") == "CustomResourceDefinition":
        return [document]
    if str(document.get("kind") or "").endswith("List"):
        return [crd for entry in document.get("items") or () for crd in crds_in(entry)]
    return []


@functools.lru_cache(maxsize=64)
def _crds_in_file(path: str, size: int, mtime_ns: int) -> tuple[dict[str, Any], ...]:
    # parsed once per process while the file is unchanged: CRD files are megabytes of YAML.
    # The dicts are shared between callers, who must not modify them (the validator never does).
    text = Path(path).read_text(encoding="utf-8")
    return tuple(crd for document in yamlio.load_all(text, path) for crd in crds_in(document))


def load_crds_from_path(path: Path | str) -> list[dict[str, Any]]:
    """Every CustomResourceDefinition in a file, or in the *.yaml/*.yml/*.json files of a directory (sorted,
    recursively); other documents are skipped. Finding none is an error: the path is likely wrong."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in CRD_FILE_SUFFIXES)
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
        raise KrcError(f"no CustomResourceDefinition found in {path}; give CRD YAML files, a directory of them, "
                       "a chart .tgz or NAME@VERSION", Location(str(path)))
    return crds
