"""Validating environment files against the JSON Schema shipped in compiler/schemas/.

Each layer is checked on its own (so every error points at the file that wrote it), then the merged result is
checked for what an environment must have once all layers are applied.
"""
from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import Any

import jsonschema
from referencing import Registry, Resource

from ..diagnostics import fieldpath
from ..diagnostics.problems import Location, Problem
from ..documents.quick_validity import Check, compile_validity
from ..documents.yamlio import Path, Positions
from ..k8s.patterns import schema_regex
from . import hints
from .layering import named_path, shown_path

SCHEMA_FILE = "environment.schema.json"
# What a resolved environment must define, whichever layer sets it.
REQUIRED_AFTER_MERGE: tuple[Path, ...] = (
    ("operator", "chart", "repository"), ("operator", "chart", "name"), ("operator", "chart", "version"),
    ("operator", "namespace"), ("ray", "version"), ("ray", "image"), ("namespace",),
)


@functools.cache
def environment_schema() -> dict[str, Any]:
    text = resources.files("compiler.schemas").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _pattern(validator: Any, pattern: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    """JSON Schema's `pattern` as ECMA-262 reads it: `$` is the end of the text (k8s/patterns.py), so a name
    ending in a newline does not pass for a name."""
    if validator.is_type(instance, "string") and not schema_regex(pattern).search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    schema = environment_schema()
    base = jsonschema.validators.validator_for(schema)
    cls = jsonschema.validators.extend(base, {"pattern": _pattern})  # type: ignore[no-untyped-call]
    validator: jsonschema.protocols.Validator = cls(schema, format_checker=base.FORMAT_CHECKER)
    return validator


def _layer_keeps(required: tuple[str, ...]) -> tuple[str, ...]:
    """Of a `required` list, what validate_layer reports missing: an item's name (see _layer_may_omit)."""
    return ("name",) if "name" in required else ()


@functools.cache
def _quick_check(layer: bool) -> Check | None:
    """The validator's yes/no, compiled: a layer's (only what validate_layer reports fails it) or the merged
    environment's (anything fails it)."""
    schema = environment_schema()
    registry: Registry = Resource.from_contents(schema) @ Registry()
    return compile_validity(schema, registry, pattern=lambda pattern: schema_regex(pattern).search,
                            required=_layer_keeps if layer else None,
                            formats=jsonschema.validators.validator_for(schema).FORMAT_CHECKER)


def _nearest(positions: Positions, path: Path, fallback: Location) -> Location:
    return fieldpath.nearest_location(positions, path) or fallback


_TYPE_WORDS = {"object": "a map", "array": "a list", "string": "text", "integer": "a whole number",
               "number": "a number", "boolean": "true or false", "null": "null"}


_EXAMPLES = {"object": "{...} with keys indented below it", "array": "[a, b] or one '- item' per line",
             "string": "some-text", "integer": "2", "number": "1.5", "boolean": "true"}


def _key(path: Path) -> str:
    """The key as the user typed it on the line: the last map key of the path."""
    keys = [str(step) for step in path if not isinstance(step, int)]
    return keys[-1] if keys else "value"


def _is_quantity(schema: Any) -> bool:
    return isinstance(schema, Mapping) and str(schema.get("description", "")).startswith("A Kubernetes quantity")


def _unknown_key_problems(error: jsonschema.ValidationError, positions: Positions, fallback: Location,
                          data: Any) -> Iterator[Problem]:
    # the caller passes additionalProperties errors on maps only, so both are maps (the types allow bool, unset)
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    instance = error.instance if isinstance(error.instance, Mapping) else {}
    allowed = sorted((schema.get("properties") or {}).keys())
    for key in instance:
        if key in allowed:
            continue
        path = tuple(error.absolute_path) + (key,)
        close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
        fix = f"did you mean '{close[0]}'?" if close else f"keys allowed here: {', '.join(allowed)}"
        parent = shown_path(data, path[:-1])
        yield Problem(f"unknown key '{key}'" + (f" in {parent}" if path[:-1] else ""),
                      _nearest(positions, path, fallback), segments=path, help=fix)


def _statement_and_fix(error: jsonschema.ValidationError, data: Any) -> tuple[str, str]:
    path = tuple(error.absolute_path)
    where, key, value = shown_path(data, path), _key(path), error.instance
    if _is_quantity(error.schema):
        return hints.bad_quantity(key, value)
    if error.validator == "required":
        fields = _missing_fields(error) or ["the missing key"]
        return f"{where} has no {', '.join(repr(f) for f in fields)}", f"add {fields[0]}: to {where}"
    if error.validator == "enum":
        allowed = error.validator_value if isinstance(error.validator_value, (list, tuple)) else []
        choices = [str(c) for c in allowed]
        close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.5)
        fix = f"did you mean {key}: {close[0]}?" if close else f"use one of: {', '.join(choices)}"
        return f"{where}: {hints.shown(value)} is not one of {', '.join(choices)}", fix
    if error.validator == "pattern" and path and path[-1] == "name":
        return (f"{where}: {hints.shown(value)} is not a valid Kubernetes name",
                "use lowercase letters, digits and '-', starting and ending with a letter or digit")
    if error.validator == "type" and error.validator_value == "string" and isinstance(value, (int, float)):
        # quoting a GPU count written under nodeSelector would give a label no node carries, and no GPU
        misplaced = hints.resource_under_node_selector(path, key, value)
        return misplaced or hints.unquoted_text(key, value)
    if error.validator == "type" and error.validator_value in ("integer", "number") and isinstance(value, str):
        quoted = hints.quoted_number(key, value, str(error.validator_value))
        if quoted:
            return quoted
    if error.validator == "type":
        wanted = _TYPE_WORDS.get(str(error.validator_value), str(error.validator_value))
        example = _EXAMPLES.get(str(error.validator_value), "...")
        return f"{where}: {hints.shown(value)} should be {wanted}", f"{key} takes {wanted}, e.g. {key}: {example}"
    if error.validator in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        bound = {"minimum": "at least", "exclusiveMinimum": "more than", "maximum": "at most",
                 "exclusiveMaximum": "less than"}[str(error.validator)]
        return f"{where}: {hints.shown(value)} is out of range", f"{key} must be {bound} {error.validator_value}"
    return (f"{where}: {hints.shown(value)} breaks '{error.validator}: {hints.shown(error.validator_value)}'",
            "fix the value")


def _problems_of(error: jsonschema.ValidationError, positions: Positions, fallback: Location,
                 data: Any) -> Iterator[Problem]:
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        yield from _unknown_key_problems(error, positions, fallback, data)
        return
    if error.validator in ("anyOf", "oneOf") and error.context and not _is_quantity(error.schema):
        # report the most specific branch failure instead of "is not valid under any of the given schemas"
        best = jsonschema.exceptions.best_match(error.context)
        yield from _problems_of(best, positions, fallback, data)
        return
    path = tuple(error.absolute_path)
    statement, fix = _statement_and_fix(error, data)
    yield Problem(statement, _nearest(positions, path, fallback), segments=path, help=fix)


def _missing_fields(error: jsonschema.ValidationError) -> list[str]:
    """The fields a `required` error is about, read from the schema and the instance (not from its message)."""
    if error.validator != "required" or not isinstance(error.instance, dict):
        return []
    required = error.validator_value if isinstance(error.validator_value, list) else []  # a list in any schema
    return [str(field) for field in required if field not in error.instance]


def _layer_may_omit(error: jsonschema.ValidationError) -> bool:
    """A layer may leave out a required field another layer sets; only an item's `name` must always be there."""
    missing = _missing_fields(error)
    return bool(missing) and "name" not in missing


def validate_layer(data: Any, positions: Positions, fallback: Location) -> list[Problem]:
    """Schema problems of one environment file (raw positions, list indexes)."""
    if not isinstance(data, dict):
        return [Problem("an environment file must be a YAML map of keys (extends:, namespace:, clusters: ...)",
                        fallback, help="start from an existing file, or run 'krc init NAME --extends base'")]
    quick = _quick_check(layer=True)
    if quick is not None and quick(data):  # the usual case: nothing to report, said without collecting errors
        return []
    problems: list[Problem] = []
    for error in _validator().iter_errors(data):
        if not _layer_may_omit(error):
            problems.extend(_problems_of(error, positions, fallback, data))
    return sorted(problems, key=Problem.sort_key)


def check_merged(data: dict[str, Any], locate: Any, fallback: Location) -> list[Problem]:
    """What only the merged environment can show: required fields no layer set."""

    problems: set[Problem] = set()  # jsonschema reports each missing field once per required list
    quick = _quick_check(layer=False)
    errors = () if quick is not None and quick(data) else _validator().iter_errors(data)
    for error in errors:
        if _layer_may_omit(error):
            path = tuple(error.absolute_path)
            where = shown_path(data, path)
            problems.update(Problem(f"{where} has no '{missing}' in any layer", locate(named_path(data, path))
                                    or fallback, segments=named_path(data, path), help=f"add {missing}: to it")
                            for missing in _missing_fields(error))
    return sorted(problems, key=Problem.sort_key) + check_required(data, locate, fallback)


def check_required(data: dict[str, Any], locate: Any, fallback: Location) -> list[Problem]:
    """Keys every resolved environment needs; `locate(path)` finds where the nearest parent was set."""
    problems = []
    for path in REQUIRED_AFTER_MERGE:
        value: Any = data
        for step in path:
            value = value.get(step) if isinstance(value, dict) else None
        if value in (None, ""):
            problems.append(Problem(f"{shown_path(data, path)} is not set by this environment or any layer it "
                                    "extends", locate(path) or fallback, segments=path,
                                    help="set it, usually in environments/base.yaml"))
    return problems


def _resolve(node: Any) -> Any:
    schema = environment_schema()
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/$defs/"):
        node = schema["$defs"][node["$ref"].removeprefix("#/$defs/")]
    return node


def schema_at(path: Path) -> dict[str, Any] | None:
    """The schema of the value at a named path (list items by name or index); None where the schema stops."""
    node = _resolve(environment_schema())
    for step in path:
        if not isinstance(node, dict):
            return None
        if node.get("type") == "array" or "items" in node:
            node = _resolve(node.get("items"))
        elif isinstance(step, str) and step in (node.get("properties") or {}):
            node = _resolve(node["properties"][step])
        elif isinstance(node.get("additionalProperties"), dict):
            node = _resolve(node["additionalProperties"])
        else:
            return None
    return node if isinstance(node, dict) else None


def keys_at(path: Path) -> list[str]:
    """The keys the schema allows at a named path (for did-you-mean)."""
    node = schema_at(path)
    return sorted((node or {}).get("properties") or {})
