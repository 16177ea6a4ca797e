"""What an environment file's schema errors say: jsonschema's full validator, run only when the compiled check
(schema._quick_check) says no, and its errors as krc's problems (file:line, a statement and a fix). Loaded on first
use through the package (compiler.environment), so a command whose environments are valid never imports jsonschema.
"""
from __future__ import annotations

import difflib
import functools
from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema

from ..diagnostics import fieldpath
from ..diagnostics.problems import Location, Problem
from ..documents.yamlio import Path, Positions
from ..k8s.patterns import schema_regex
from . import hints
from .layering import named_path, shown_path
from .schema import environment_schema


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


def format_conforms(instance: Any, name: str) -> bool:
    """The full validator's format checker, for the compiled check (the schema names no format today)."""
    return bool(jsonschema.validators.validator_for(environment_schema()).FORMAT_CHECKER.conforms(instance, name))


def layer_problems(data: dict[str, Any], positions: Positions, fallback: Location) -> list[Problem]:
    """validate_layer's problems, once the compiled check said no."""
    problems: list[Problem] = []
    for error in _validator().iter_errors(data):
        if not _layer_may_omit(error):
            problems.extend(_problems_of(error, positions, fallback, data))
    return sorted(problems, key=Problem.sort_key)


def merged_problems(data: dict[str, Any], locate: Any, fallback: Location) -> list[Problem]:
    """check_merged's problems of required fields no layer set, once the compiled check said no."""
    problems: set[Problem] = set()  # jsonschema reports each missing field once per required list
    for error in _validator().iter_errors(data):
        if _layer_may_omit(error):
            path = tuple(error.absolute_path)
            where = shown_path(data, path)
            problems.update(Problem(f"{where} has no '{missing}' in any layer", locate(named_path(data, path))
                                    or fallback, segments=named_path(data, path), help=f"add {missing}: to it")
                            for missing in _missing_fields(error))
    return sorted(problems, key=Problem.sort_key)
