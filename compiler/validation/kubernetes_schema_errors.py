"""What a plain Kubernetes object's schema errors are, by jsonschema's full validator: run only for an object the
compiled check (kubernetes_schemas) says no to, and loaded on first use through the package (compiler.validation),
so a command whose objects are all valid never imports jsonschema."""
from __future__ import annotations

import functools
from typing import Any

import jsonschema
from referencing import Registry, Resource

from .kubernetes_schemas import SchemaError, definitions, kind_schema

_CHECK_OF_VALIDATOR = {
    "additionalProperties": "schema/unknown-field", "type": "schema/type", "required": "schema/required",
    "enum": "schema/enum", "format": "schema/format", "pattern": "schema/pattern",
    "minimum": "schema/bounds", "maximum": "schema/bounds", "minLength": "schema/bounds",
    "maxLength": "schema/bounds", "minItems": "schema/bounds", "maxItems": "schema/bounds",
    "oneOf": "schema/one-of", "anyOf": "schema/any-of", "allOf": "schema/all-of", "not": "schema/not",
}


@functools.lru_cache(maxsize=8)
def _registry(version: str) -> Registry:
    return Resource.from_contents(definitions(version)) @ Registry()


@functools.lru_cache(maxsize=128)
def full_validator(version: str, api_version: str, kind: str) -> jsonschema.protocols.Validator | None:
    schema = kind_schema(version, api_version, kind)
    if schema is None:
        return None
    return jsonschema.Draft202012Validator(schema, registry=_registry(version))


def _unknown_keys(error: jsonschema.ValidationError) -> list[str]:
    allowed = set((error.schema or {}).get("properties") or {}) if isinstance(error.schema, dict) else set()
    return sorted(k for k in error.instance if k not in allowed) if isinstance(error.instance, dict) else []


def _leaves(error: jsonschema.ValidationError) -> list[jsonschema.ValidationError]:
    """anyOf/oneOf errors stand for their most specific cause (jsonschema's best_match)."""
    if error.context:
        return [jsonschema.exceptions.best_match(error.context)]
    return [error]


def schema_errors(version: str, document: dict[str, Any]) -> list[SchemaError]:
    """Every violation of the object against its kind's strict schema, sorted; [] for kinds without a schema."""
    validator = full_validator(version, str(document.get("apiVersion") or ""), str(document.get("kind") or ""))
    if validator is None:
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
