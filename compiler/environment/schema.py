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

from .. import fieldpath
from ..problems import Location, Problem
from ..yamlio import Path, Positions
from .layering import named_path

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


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    schema = environment_schema()
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _nearest(positions: Positions, path: Path, fallback: Location) -> Location:
    return fieldpath.nearest_location(positions, path) or fallback


_TYPE_WORDS = {"object": "a map", "array": "a list", "string": "text", "integer": "a whole number",
               "number": "a number", "boolean": "true or false", "null": "null"}


def _shown(value: Any) -> str:
    """A value as YAML users wrote it (JSON is close enough), cut short: messages stay one readable line."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _dotted(path: Path) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def _unknown_key_problems(error: jsonschema.ValidationError, positions: Positions,
                          fallback: Location) -> Iterator[Problem]:
    # the caller passes additionalProperties errors on maps only, so both are maps (the types allow bool, unset)
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    instance = error.instance if isinstance(error.instance, Mapping) else {}
    allowed = sorted((schema.get("properties") or {}).keys())
    for key in instance:
        if key in allowed:
            continue
        path = tuple(error.absolute_path) + (key,)
        close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'?" if close else f"allowed here: {', '.join(allowed)}"
        yield Problem(f"unknown key '{key}' in {_dotted(path[:-1])}; {hint}",
                      _nearest(positions, path, fallback), segments=path)


def _problems_of(error: jsonschema.ValidationError, positions: Positions, fallback: Location) -> Iterator[Problem]:
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        yield from _unknown_key_problems(error, positions, fallback)
        return
    if error.validator in ("anyOf", "oneOf") and error.context:
        # report the most specific branch failure instead of "is not valid under any of the given schemas"
        best = jsonschema.exceptions.best_match(error.context)
        yield from _problems_of(best, positions, fallback)
        return
    path = tuple(error.absolute_path)
    message = error.message
    if error.validator == "required":
        message = f"{message} in {_dotted(path)}; add it"
    elif error.validator == "enum":
        message = (f"{_dotted(path)}: {_shown(error.instance)} is not one of {_shown(error.validator_value)}; "
                   "use one of them")
    elif error.validator == "pattern" and path and path[-1] == "name":
        message = (f"{_dotted(path)}: {_shown(error.instance)} is not a valid Kubernetes name; use lowercase letters, "
                   "digits and '-', starting and ending with a letter or digit")
    elif error.validator == "type" and error.validator_value == "string" and isinstance(error.instance, (int, float)):
        message = f"{_dotted(path)}: {error.instance!r} is read as a number; quote it: '{error.instance}'"
    elif error.validator == "type":
        wanted = _TYPE_WORDS.get(str(error.validator_value), str(error.validator_value))
        message = f"{_dotted(path)}: {_shown(error.instance)} should be {wanted}; change the value"
    else:
        message = (f"{_dotted(path)}: {_shown(error.instance)} breaks "
                   f"'{error.validator}: {_shown(error.validator_value)}'; fix the value")
    yield Problem(message, _nearest(positions, path, fallback), segments=path)


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
        return [Problem("an environment file must be a YAML map; start from environments/dev.yaml", fallback)]
    problems: list[Problem] = []
    for error in _validator().iter_errors(data):
        if not _layer_may_omit(error):
            problems.extend(_problems_of(error, positions, fallback))
    return sorted(problems, key=Problem.sort_key)


def check_merged(data: dict[str, Any], locate: Any, fallback: Location) -> list[Problem]:
    """What only the merged environment can show: required fields no layer set."""

    problems: set[Problem] = set()  # jsonschema reports each missing field once per required list
    for error in _validator().iter_errors(data):
        if _layer_may_omit(error):
            path = tuple(error.absolute_path)
            where = ".".join(str(p) for p in named_path(data, path)) or "(top level)"
            problems.update(Problem(f"{where} has no '{missing}' in any layer; add it",
                                    locate(named_path(data, path)) or fallback, segments=named_path(data, path))
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
            problems.append(Problem(f"{_dotted(path)} is not set by this environment or any layer it extends; "
                                    f"set it (usually in environments/base.yaml)", locate(path) or fallback,
                                    segments=path))
    return problems
