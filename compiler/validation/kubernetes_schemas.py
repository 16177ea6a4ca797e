"""Plain Kubernetes objects against the strict JSON schemas of a Kubernetes version (kubernetes-validate's data).

The `kubernetes-validate` package ships, per Kubernetes minor version (1.25 to 1.37), one JSON schema per kind
and version, derived from the API's OpenAPI document; its `-strict` set forbids fields the API does not declare.
The API server would drop such a field (a typo, `resources.limit` for `limits`) or reject a wrong type: krc
reports both before anything is deployed. Only the package's schema files are used; each (Kubernetes version,
kind) is compiled once per process into a yes/no check, and jsonschema's full validator (kubernetes_schema_errors,
loaded on first use) runs only for an object the check says no to, to report its errors.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import validation
from ..diagnostics.problems import KrcError
from ..documents.quick_validity import Check, compile_validity, pointer_lookup

PACKAGE = "kubernetes_validate"


@dataclass(frozen=True)
class SchemaError:
    path: tuple[str | int, ...]  # of the offending field inside the object
    check: str  # schema/unknown-field, schema/type, ...
    message: str


@functools.cache
def _root() -> Path:
    """The package's schema folder, found without importing the package (its code imports jsonschema)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise KrcError(f"the {PACKAGE} package is not installed; install krc with pip (it depends on it)")
    return Path(next(iter(spec.submodule_search_locations)), "kubernetes-json-schema")


@functools.lru_cache(maxsize=1)
def supported_versions() -> tuple[str, ...]:
    """Kubernetes minor versions with strict schemas, oldest first ('1.25', ...)."""
    found = {m.group(1) for entry in _root().iterdir()
             if (m := re.fullmatch(r"v(\d+\.\d+)\.\d+-local-strict", entry.name))}
    return tuple(sorted(found, key=lambda v: tuple(int(p) for p in v.split("."))))


def _folder(version: str) -> Path:
    if version not in supported_versions():
        known = supported_versions()
        raise KrcError(f"no Kubernetes schemas for version {version} (kubernetes-validate has {known[0]} to "
                       f"{known[-1]}); set kubernetesVersion to one of them")
    return _root().joinpath(f"v{version}.0-local-strict")


@functools.lru_cache(maxsize=8)
def definitions(version: str) -> dict[str, Any]:
    """The version's shared definitions, which every kind's schema refers to."""
    found: dict[str, Any] = json.loads(_folder(version).joinpath("_definitions.json").read_text(encoding="utf-8"))
    return found


def _schema_file(api_version: str, kind: str) -> str:
    # rbac.authorization.k8s.io/v1 -> rbac-v1; v1 -> v1 (the package's file naming)
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    return f"{kind.lower()}-{group_version}.json"


@functools.lru_cache(maxsize=128)
def kind_schema(version: str, api_version: str, kind: str) -> dict[str, Any] | None:
    """The kind's strict schema, or None when the version has none for it."""
    path = _folder(version).joinpath(_schema_file(api_version, kind))
    if not path.is_file():
        return None
    found: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return found


@functools.lru_cache(maxsize=128)
def _quick_check(version: str, api_version: str, kind: str) -> Check | None:
    schema = kind_schema(version, api_version, kind)
    if schema is None:
        return None
    return compile_validity(schema, pointer_lookup(schema, definitions(version)))


def knows(version: str, document: dict[str, Any]) -> bool:
    return kind_schema(version, str(document.get("apiVersion") or ""), str(document.get("kind") or "")) is not None


def validate(version: str, document: dict[str, Any]) -> list[SchemaError]:
    """Every violation of the object against its kind's strict schema; [] for kinds without a schema."""
    api_version, kind = str(document.get("apiVersion") or ""), str(document.get("kind") or "")
    if kind_schema(version, api_version, kind) is None:
        return []
    quick = _quick_check(version, api_version, kind)
    if quick is not None and quick(document):  # the usual case: valid, said without collecting errors
        return []
    return validation.schema_errors(version, document)
