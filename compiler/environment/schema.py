"""Validating environment files against the JSON Schema shipped in compiler/schemas/.

Each layer is checked on its own (so every error points at the file that wrote it), then the merged result is
checked for what an environment must have once all layers are applied. The compiled yes/no check answers for
the valid files (almost all); jsonschema's full validator runs only for the others, in schema_report.
"""
from __future__ import annotations

import functools
import json
import pathlib
from typing import Any

from .. import environment
from ..diagnostics.problems import Location, Problem
from ..documents.quick_validity import Check, compile_validity, pointer_lookup
from ..documents.yamlio import Path, Positions
from ..k8s.patterns import schema_regex
from .layering import shown_path

SCHEMA_FILE = "environment.schema.json"
# Read beside this package's code, as it is installed (a folder, never a zip archive): importlib.resources would
# import zipfile and its readers for that, about 5 ms of every compiling command's start.
_SCHEMA_PATH = pathlib.Path(__file__).resolve().parents[1] / "schemas" / SCHEMA_FILE
# What a resolved environment must define, whichever layer sets it.
REQUIRED_AFTER_MERGE: tuple[Path, ...] = (
    ("operator", "chart", "repository"), ("operator", "chart", "name"), ("operator", "chart", "version"),
    ("operator", "namespace"), ("ray", "version"), ("ray", "image"), ("namespace",),
)


@functools.cache
def environment_schema() -> dict[str, Any]:
    text = _SCHEMA_PATH.read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _layer_keeps(required: tuple[str, ...]) -> tuple[str, ...]:
    """Of a `required` list, what validate_layer reports missing: an item's name (see _layer_may_omit)."""
    return ("name",) if "name" in required else ()


@functools.cache
def _quick_check(layer: bool) -> Check | None:
    """The validator's yes/no, compiled: a layer's (only what validate_layer reports fails it) or the merged
    environment's (anything fails it)."""
    schema = environment_schema()
    return compile_validity(schema, pointer_lookup(schema), pattern=lambda pattern: schema_regex(pattern).search,
                            required=_layer_keeps if layer else None, formats=_format_conforms)


def _format_conforms(instance: Any, name: str) -> bool:
    """The full validator's format check, loaded only if the schema ever names a format (it does not today)."""
    return environment.format_conforms(instance, name)


def validate_layer(data: Any, positions: Positions, fallback: Location) -> list[Problem]:
    """Schema problems of one environment file (raw positions, list indexes)."""
    if not isinstance(data, dict):
        return [Problem("an environment file must be a YAML map of keys (extends:, namespace:, clusters: ...)",
                        fallback, help="start from an existing file, or run 'krc init NAME --extends base'")]
    quick = _quick_check(layer=True)
    if quick is not None and quick(data):  # the usual case: nothing to report, said without collecting errors
        return []
    return environment.layer_problems(data, positions, fallback)


def check_merged(data: dict[str, Any], locate: Any, fallback: Location) -> list[Problem]:
    """What only the merged environment can show: required fields no layer set."""
    quick = _quick_check(layer=False)
    problems = [] if quick is not None and quick(data) else environment.merged_problems(data, locate, fallback)
    return problems + check_required(data, locate, fallback)


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
