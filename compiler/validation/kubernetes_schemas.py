"""Plain Kubernetes objects against the strict JSON schemas of a Kubernetes version (kubernetes-validate's data).

The `kubernetes-validate` package ships, per Kubernetes minor version (1.25 to 1.37), one JSON schema per kind
and version, derived from the API's OpenAPI document; its `-strict` set forbids fields the API does not declare.
The API server would drop such a field (a typo, `resources.limit` for `limits`) or reject a wrong type: krc
reports both before anything is deployed. Only the package's schema files are used; validators are compiled
once per (Kubernetes version, kind) and process.
"""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jsonschema
from referencing import Registry, Resource

from ..diagnostics.problems import KrcError
from ..documents.quick_validity import Check, compile_validity

PACKAGE = "kubernetes_validate"
_CHECK_OF_VALIDATOR = {
    "additionalProperties": "schema/unknown-field", "type": "schema/type", "required": "schema/required",
    "enum": "schema/enum", "format": "schema/format", "pattern": "schema/pattern",
    "minimum": "schema/bounds", "maximum": "schema/bounds", "minLength": "schema/bounds",
    "maxLength": "schema/bounds", "minItems": "schema/bounds", "maxItems": "schema/bounds",
    "oneOf": "schema/one-of", "anyOf": "schema/any-of", "allOf": "schema/all-of", "not": "schema/not",
}


@dataclass(frozen=True)
class SchemaError:
    path: tuple[str | int, ...]  # of the offending field inside the object
    check: str  # schema/unknown-field, schema/type, ...
    message: str


def _root() -> Any:
    return resources.files(PACKAGE).joinpath("kubernetes-json-schema")


@functools.lru_cache(maxsize=1)
def supported_versions() -> tuple[str, ...]:
    """Kubernetes minor versions with strict schemas, oldest first ('1.25', ...)."""
    found = {m.group(1) for entry in _root().iterdir()
             if (m := re.fullmatch(r"v(\d+\.\d+)\.\d+-local-strict", entry.name))}
    return tuple(sorted(found, key=lambda v: tuple(int(p) for p in v.split("."))))


def _folder(version: str) -> Any:
    if version not in supported_versions():
        known = supported_versions()
        raise KrcError(f"no Kubernetes schemas for version {version} (kubernetes-validate has {known[0]} to "
                       f"{known[-1]}); set kubernetesVersion to one of them")
    return _root().joinpath(f"v{version}.0-local-strict")


@functools.lru_cache(maxsize=8)
def _registry(version: str) -> Registry:
    definitions = json.loads(_folder(version).joinpath("_definitions.json").read_text(encoding="utf-8"))
    return Resource.from_contents(definitions) @ Registry()


def _schema_file(api_version: str, kind: str) -> str:
    # rbac.authorization.k8s.io/v1 -> rbac-v1; v1 -> v1 (the package's file naming)
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    return f"{kind.lower()}-{group_version}.json"


@functools.lru_cache(maxsize=128)
def _validator(version: str, api_version: str, kind: str) -> jsonschema.protocols.Validator | None:
    path = _folder(version).joinpath(_schema_file(api_version, kind))
    if not path.is_file():
        return None
    schema = json.loads(path.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema, registry=_registry(version))


@functools.lru_cache(maxsize=128)
def _quick_check(version: str, api_version: str, kind: str) -> Check | None:
    validator = _validator(version, api_version, kind)
    if validator is None:
        return None
    return compile_validity(dict(validator.schema), _registry(version))  # type: ignore[arg-type]


def knows(version: str, document: dict[str, Any]) -> bool:
    return _validator(version, str(document.get("apiVersion") or ""), str(document.get("kind") or "")) is not None


def _unknown_keys(error: jsonschema.ValidationError) -> list[str]:
    allowed = set((error.schema or {}).get("properties") or {}) if isinstance(error.schema, dict) else set()
    return sorted(k for k in error.instance if k not in allowed) if isinstance(error.instance, dict) else []


def _leaves(error: jsonschema.ValidationError) -> list[jsonschema.ValidationError]:
    """anyOf/oneOf errors stand for their most specific cause (jsonschema's best_match)."""
    if error.context:
        return [jsonschema.exceptions.best_match(error.context)]
    return [error]


def validate(version: str, document: dict[str, Any]) -> list[SchemaError]:
    """Every violation of the object against its kind's strict schema; [] for kinds without a schema."""
    api_version, kind = str(document.get("apiVersion") or ""), str(document.get("kind") or "")
    validator = _validator(version, api_version, kind)
    if validator is None:
        return []
    quick = _quick_check(version, api_version, kind)
    if quick is not None and quick(document):  # the usual case: valid, said without collecting errors
        return []
    out: list[SchemaError] = []
    for top in validator.iter_errors(document):
        for error in _leaves(top):
            path = tuple(error.absolute_path)
            check = _CHECK_OF_VALIDATOR.get(str(error.validator), "schema/type")
            if error.validator == "additionalProperties":
                for key in _unknown_keys(error):
                    out.append(SchemaError(path + (key,), check, f"unknown field '{key}': Kubernetes {version} "
                                           f"does not declare it, the API server drops or rejects it"))
                continue
            out.append(SchemaError(path, check, f"{_short(error.message)} (Kubernetes {version} schema)"))
    return sorted(out, key=lambda e: (tuple(str(p) for p in e.path), e.message))


def _short(message: str) -> str:
    return message if len(message) <= 160 else message[:157] + "..."
