"""One pass over an object with its compiled schema: prune, default and validate, as the API server does.

The API server decodes, prunes unknown fields (and nulls of non-nullable fields), applies defaults, then
validates the result (schema, then CEL). This walk does the same in a single descent: at each object it drops
unknown fields (reporting them), applies defaults of absent properties (a defaulted object is then walked, so it
gets its own nested defaults), walks the children, then checks required fields, sizes and CEL rules on the
defaulted value. It returns the copy the API server would store.
"""
from __future__ import annotations

import difflib
import json
from typing import Any

from ..fieldpath import LinkedPath
from . import objectmeta, string_formats
from .nodes import SchemaNode, enum_key

_EXPECTED = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "a boolean",
             "object": "a map", "array": "a list", "int-or-string": "an integer or a string"}
_EMBEDDED_KEYS = ("apiVersion", "kind")
_RESOURCE_KEYS = frozenset(("apiVersion", "kind", "metadata"))
# the API server accepts 2.0 where an integer is expected; a string field takes a number only when quoted
_INTEGRAL = ("integer", "int-or-string")
_QUOTABLE = ("string", "int-or-string")


def describe(value: Any) -> str:
    kind = type(value)
    if value is None:
        return "null"
    if kind is bool:
        return f"the boolean {str(value).lower()}"
    if kind in (int, float):
        return f"the number {value}"
    if kind is dict:
        return "a map"
    if kind is list:
        return "a list"
    return f"the string '{string_formats.as_text(value)}'"


def json_copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {k: json_copy(v) for k, v in value.items()}
    if kind is list:
        return [json_copy(v) for v in value]
    return value


class Walker:
    """Collects findings as (linked path, rule, message, severity); `walk` returns the defaulted copy."""

    __slots__ = ("found",)

    def __init__(self) -> None:
        self.found: list[tuple[LinkedPath, str, str, str]] = []

    def report(self, path: LinkedPath, rule: str, message: str, severity: str = "error") -> None:
        self.found.append((path, rule, message, severity))

    def walk(self, node: SchemaNode, value: Any, path: LinkedPath) -> Any:
        kind = type(value)
        if value is None:
            if not node.nullable:
                self.report(path, "schema/type", f"null is not allowed here, {_EXPECTED.get(node.type, 'a value')} "
                                                 "is expected; give a value or remove the entry")
            return None
        accepted = node.accepted
        if accepted is not None and kind not in accepted and not (
                kind is float and node.type in _INTEGRAL and value.is_integer()):
            hint = "quote the value" if node.type in _QUOTABLE and kind in (int, float, bool) else "fix the value"
            self.report(path, "schema/type", f"must be {_EXPECTED[node.type]}, not {describe(value)}; {hint}")
            return value
        if kind is dict:
            value = self._object(node, value, path)
        elif kind is list:
            value = self._array(node, value, path)
        elif node.scalar_checks:
            self._scalar(node, value, path)
        if node.enum is not None and kind in (dict, list) and not node.enum_contains(value):
            self.report(path, "schema/enum", f"value is not one of the allowed values {node.enum_text}; use one")
        if node.any_of or node.all_of or node.one_of or node.not_ is not None:
            self._composition(node, value, path)
        for rule in node.rules:
            message = rule.failure(value)
            if message is not None:
                self.report(_with_field_path(path, rule.field_path), "schema/cel", message)
        return value

    def _object(self, node: SchemaNode, value: dict[str, Any], path: LinkedPath) -> dict[str, Any]:
        properties = node.properties or {}
        additional = node.additional
        out: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:  # YAML allows `1:` or `true:` keys; JSON (what the API server gets) has text
                key = json.dumps(key) if isinstance(key, (bool, int, float)) else str(key)
            if (node.is_root or node.embedded) and key in _RESOURCE_KEYS:
                out[key] = self._resource_field(node, key, item, (path, key))
                continue
            child = properties.get(key)
            if child is None:
                if isinstance(additional, SchemaNode):
                    child = additional
                elif additional is True or node.preserve:
                    out[key] = json_copy(item)
                    continue
                else:
                    self._unknown(node, key, path)
                    continue
            if item is None and not child.nullable:
                if not any(name == key for name, _ in node.defaults):
                    self.report((path, key), "schema/nullable",
                                f"'{key}' is null but not nullable, so the API server drops it; "
                                "give it a value or remove the key", "warning")
                continue  # pruned; a default below takes its place
            out[key] = self.walk(child, item, (path, key))
        if node.is_root and "metadata" not in out:
            objectmeta.check_object_meta({}, (path, "metadata"), self.report, require_name=True)
        for name, default in node.defaults:
            if name not in out:
                out[name] = self.walk(properties[name], json_copy(default), (path, name))
        for name in node.required:
            if name not in out:
                self.report((path, name), "schema/required", f"missing required field '{name}'; add it")
        if node.embedded and out and not node.is_root:
            for name in _EMBEDDED_KEYS:
                if name not in out:
                    self.report((path, name), "schema/required",
                                f"an embedded resource needs '{name}'; add it")
        count = len(out)
        if node.min_properties is not None and count < node.min_properties:
            self.report(path, "schema/bounds", f"has {count} fields, fewer than the minimum "
                                               f"{node.min_properties}; add fields")
        if node.max_properties is not None and count > node.max_properties:
            self.report(path, "schema/bounds", f"has {count} fields, more than the maximum "
                                               f"{node.max_properties}; remove some")
        return out

    def _resource_field(self, node: SchemaNode, key: str, item: Any, path: LinkedPath) -> Any:
        """apiVersion, kind and metadata of the object itself or of an embedded resource: always allowed, and
        metadata is checked as ObjectMeta whatever the schema says about it."""
        if key == "metadata":
            return objectmeta.check_object_meta(item, path, self.report, node.is_root)
        if not isinstance(item, str):
            self.report(path, "schema/type", f"{key} must be a string; fix it")
        return item

    def _unknown(self, node: SchemaNode, key: Any, path: LinkedPath) -> None:
        text = str(key)
        names = node.property_names
        lowered = [n for n in names if n.lower() == text.lower()]
        close = lowered or difflib.get_close_matches(text, names, n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'?" if close else "remove it or check the field name and CRD version"
        self.report((path, key), "schema/unknown-field",
                    f"unknown field '{text}'; the API server would prune it silently; {hint}")

    def _array(self, node: SchemaNode, value: list[Any], path: LinkedPath) -> list[Any]:
        items = node.items
        out: list[Any]
        if items is None:
            out = json_copy(value)
        else:
            walk = self.walk
            out = [walk(items, item, (path, i)) for i, item in enumerate(value)]
        count = len(out)
        if node.min_items is not None and count < node.min_items:
            self.report(path, "schema/bounds", f"has {count} items, fewer than the minimum {node.min_items}; "
                                               "add items")
        if node.max_items is not None and count > node.max_items:
            self.report(path, "schema/bounds", f"has {count} items, more than the maximum {node.max_items}; "
                                               "remove some")
        if node.list_type in ("set", "map") or node.unique_items:
            self._unique(node, out, path)
        return out

    def _unique(self, node: SchemaNode, items: list[Any], path: LinkedPath) -> None:
        seen: dict[Any, int] = {}
        for i, item in enumerate(items):
            if node.list_type == "map":
                if not isinstance(item, dict):
                    continue
                if any(item.get(k) is None for k in node.map_keys):
                    continue  # a missing key is reported as required; comparing it would only add noise
                key: Any = tuple(_hashable(item.get(k)) for k in node.map_keys)
                shown = ", ".join(f"{k}={json.dumps(item.get(k))}" for k in node.map_keys)
            else:
                key, shown = _hashable(item), json.dumps(item, sort_keys=True, default=str)
            if key in seen:
                what = "key" if node.list_type == "map" else "value"
                self.report((path, i), "schema/duplicate",
                            f"duplicate {what} {shown} (also at index {seen[key]}); the list must not repeat "
                            f"{'keys' if node.list_type == 'map' else 'values'}: remove or rename one")
            else:
                seen[key] = i

    def _scalar(self, node: SchemaNode, value: Any, path: LinkedPath) -> None:
        if node.enum is not None and not node.enum_contains(value):
            close = difflib.get_close_matches(string_formats.as_text(value), node.enum_strings, n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'?" if close else "use one of them"
            self.report(path, "schema/enum", f"{describe(value)} is not one of {node.enum_text}; {hint}")
        if type(value) in (int, float):
            self._number(node, value, path)
            return
        if type(value) is bool:
            return
        text = string_formats.as_text(value)
        length = len(text)
        if node.min_length is not None and length < node.min_length:
            self.report(path, "schema/bounds", f"is {length} characters long, shorter than the minimum "
                                               f"{node.min_length}; lengthen it")
        if node.max_length is not None and length > node.max_length:
            self.report(path, "schema/bounds", f"is {length} characters long, longer than the maximum "
                                               f"{node.max_length}; shorten it")
        if node.pattern is not None and not node.pattern.search(text):
            self.report(path, "schema/pattern", f"'{text}' does not match the pattern {node.pattern_text}; "
                                                "fix the value")
        if node.string_format is not None:
            check, looks_like = node.string_format
            if not check(text):
                self.report(path, "schema/format", f"'{text}' is not {looks_like} (format {node.format_name}); "
                                                   "fix the value")

    def _number(self, node: SchemaNode, value: float, path: LinkedPath) -> None:
        if node.integer_range is not None and type(value) is int:
            low, high = node.integer_range
            if not low <= value <= high:
                self.report(path, "schema/format", f"{value} does not fit in {node.format_name} (the operator "
                                                   f"decodes it as a Go {node.format_name}); use a smaller value")
        low_bound, high_bound = node.minimum, node.maximum
        if low_bound is not None and (value <= low_bound if node.exclusive_minimum else value < low_bound):
            op = ">" if node.exclusive_minimum else ">="
            self.report(path, "schema/bounds", f"{value} is below the minimum; use a value {op} {low_bound}")
        if high_bound is not None and (value >= high_bound if node.exclusive_maximum else value > high_bound):
            op = "<" if node.exclusive_maximum else "<="
            self.report(path, "schema/bounds", f"{value} is above the maximum; use a value {op} {high_bound}")
        if node.multiple_of and (value / node.multiple_of) % 1:
            self.report(path, "schema/bounds", f"{value} is not a multiple of {node.multiple_of}; round it")

    def _composition(self, node: SchemaNode, value: Any, path: LinkedPath) -> None:
        def passes(branch: SchemaNode) -> bool:
            probe = Walker()
            probe.walk(branch, value, path)
            return not any(severity == "error" for *_, severity in probe.found)

        if node.any_of and not any(passes(b) for b in node.any_of):
            self.report(path, "schema/any-of", "matches none of the allowed shapes (anyOf); fix the value")
        if node.all_of and not all(passes(b) for b in node.all_of):
            self.report(path, "schema/all-of", "does not match every required shape (allOf); fix the value")
        if node.one_of and sum(passes(b) for b in node.one_of) != 1:
            self.report(path, "schema/one-of", "must match exactly one allowed shape (oneOf); fix the value")
        if node.not_ is not None and passes(node.not_):
            self.report(path, "schema/not", "matches a shape the schema forbids (not); change the value")


def _hashable(value: Any) -> Any:
    try:
        hash(value)
        return enum_key(value)
    except TypeError:
        return json.dumps(value, sort_keys=True, default=str)


def _with_field_path(path: LinkedPath, field_path: str) -> LinkedPath:
    """A rule's fieldPath (".spec.foo" or ".items[2]") narrows where its failure is reported."""
    for part in field_path.replace("]", "").replace("[", ".").split("."):
        if part:
            path = (path, int(part) if part.isdigit() else part.strip("'\""))
    return path
