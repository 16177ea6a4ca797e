"""A structural CRD schema compiled into a tree of small nodes, once, so validating an object is a plain walk.

Children (properties, items, additionalProperties) are compiled when a walk first reaches them: a KubeRay CRD
holds ~17,000 schema nodes (all of PodSpec, several times), and an environment's objects visit a few hundred.

Everything a check needs is precomputed here: accepted Python types, property maps, sorted sibling names for
did-you-mean, enum sets, compiled regexes (shared across nodes), format predicates, defaults, list keys and
compiled CEL programs. The walk in `walker.py` never looks at the schema dict again.
"""
from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..k8s.patterns import schema_regex
from ..problems import KrcError
from . import cel, string_formats

# Exact Python types of JSON-like data as YAML/JSON loaders give it (bool is not an int here).
_STRINGISH = (str, datetime.date, datetime.datetime)
ACCEPTED_TYPES: dict[str, frozenset[type]] = {
    "string": frozenset(_STRINGISH),
    "integer": frozenset((int,)),
    "number": frozenset((int, float)),
    "boolean": frozenset((bool,)),
    "object": frozenset((dict,)),
    "array": frozenset((list,)),
}
INT_OR_STRING = frozenset((int,) + _STRINGISH)


def enum_key(value: Any) -> tuple[type, Any]:
    # keyed by type so 1, 1.0 and True stay distinct, as in JSON
    return (float if type(value) is int else type(value), float(value) if type(value) is int else value)


class LazyNodes(Mapping[str, "SchemaNode"]):
    """Property schemas compiled on first lookup, then kept."""

    __slots__ = ("_raw", "_compiled", "_where", "_value_only")

    def __init__(self, raw: dict[str, Any], where: str, value_only: bool):
        self._raw = raw
        self._compiled: dict[str, SchemaNode] = {}
        self._where = where
        self._value_only = value_only

    def __getitem__(self, name: str) -> SchemaNode:
        node = self._compiled.get(name)
        if node is None:
            node = self._compiled[name] = _compile(self._raw[name], self._where, self._value_only)
        return node

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in self._raw else default

    def __contains__(self, name: object) -> bool:
        return name in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


class SchemaNode:
    """One schema position. Attributes default to "no constraint"; only what the schema says is set."""

    __slots__ = (
        "type", "accepted", "nullable", "properties", "property_names", "_additional", "preserve", "embedded",
        "is_root", "required", "defaults", "_items", "_lazy", "enum", "enum_strings", "enum_text", "pattern",
        "pattern_text",
        "string_format", "integer_range", "format_name", "minimum", "maximum", "exclusive_minimum",
        "exclusive_maximum", "multiple_of", "min_length", "max_length", "min_items", "max_items",
        "min_properties", "max_properties", "unique_items", "list_type", "map_keys", "any_of", "all_of",
        "one_of", "not_", "rules", "scalar_checks",
    )

    def __init__(self) -> None:
        self.type = ""
        self.accepted: frozenset[type] | None = None
        self.nullable = False
        self.properties: Mapping[str, SchemaNode] | None = None
        self.property_names: tuple[str, ...] = ()
        self._additional: SchemaNode | bool | None = None
        self._items: SchemaNode | None = None
        # raw schemas of `items` and `additionalProperties` not compiled yet, with the context to compile them
        self._lazy: tuple[Any, Any, str, bool] | None = None
        self.preserve = False
        self.embedded = False
        self.is_root = False
        self.required: tuple[str, ...] = ()
        self.defaults: tuple[tuple[str, Any], ...] = ()
        self.enum: frozenset[Any] | tuple[Any, ...] | None = None  # keys by enum_key, or raw values
        self.enum_strings: tuple[str, ...] = ()  # for did-you-mean
        self.enum_text = ""
        self.pattern: re.Pattern[str] | None = None
        self.pattern_text = ""
        self.string_format: tuple[Callable[[str], bool], str] | None = None
        self.integer_range: tuple[int, int] | None = None
        self.format_name = ""
        self.minimum: float | None = None
        self.maximum: float | None = None
        self.exclusive_minimum = False
        self.exclusive_maximum = False
        self.multiple_of: float | None = None
        self.min_length: int | None = None
        self.max_length: int | None = None
        self.min_items: int | None = None
        self.max_items: int | None = None
        self.min_properties: int | None = None
        self.max_properties: int | None = None
        self.unique_items = False
        self.list_type = ""
        self.map_keys: tuple[str, ...] = ()
        self.any_of: tuple[SchemaNode, ...] = ()
        self.all_of: tuple[SchemaNode, ...] = ()
        self.one_of: tuple[SchemaNode, ...] = ()
        self.not_: SchemaNode | None = None
        self.rules: tuple[cel.CelRule, ...] = ()
        self.scalar_checks = False  # any of enum/pattern/format/bounds/lengths set: the fast path skips it

    def _expand(self) -> None:
        items, additional, where, value_only = self._lazy  # type: ignore[misc]
        self._lazy = None
        if isinstance(items, dict):
            self._items = _compile(items, where, value_only)
        if isinstance(additional, dict):
            self._additional = _compile(additional, where, value_only)

    @property
    def items(self) -> SchemaNode | None:
        if self._lazy is not None:
            self._expand()
        return self._items

    @property
    def additional(self) -> SchemaNode | bool | None:
        """A node, True (anything goes) or None (not declared)."""
        if self._lazy is not None:
            self._expand()
        return self._additional

    def enum_contains(self, value: Any) -> bool:
        if isinstance(value, (datetime.date, datetime.datetime)):
            value = string_formats.as_text(value)
        if isinstance(self.enum, frozenset):
            try:
                return enum_key(value) in self.enum
            except TypeError:  # an object or list value is never equal to a scalar member
                return False
        # members include objects or lists: compare structurally (JSON equality, bools apart from numbers)
        return any(type(value) is type(member) and value == member for member in self.enum or ())


def _is_int_or_string_pair(branches: Any) -> bool:
    return isinstance(branches, list) and sorted(
        b.get("type", "") for b in branches if isinstance(b, dict) and len(b) == 1) == ["integer", "string"]


def compile_schema(schema: dict[str, Any], where: str, root: bool = True) -> SchemaNode:
    """Compile an openAPIV3Schema; `where` (CRD name and version) is named in errors about the schema."""
    node = _compile(schema, where, value_only=False)
    node.is_root = root
    return node


def _compile(schema: Any, where: str, value_only: bool) -> SchemaNode:
    if not isinstance(schema, dict):
        raise KrcError(f"{where}: a schema is not a map; fix the CRD")
    node = SchemaNode()
    node.type = str(schema.get("type", ""))
    node.nullable = bool(schema.get("nullable", False))
    node.preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields", False)) or value_only
    node.embedded = bool(schema.get("x-kubernetes-embedded-resource", False))
    if schema.get("x-kubernetes-int-or-string"):
        node.accepted = INT_OR_STRING
        node.type = "int-or-string"
    elif node.type:
        if node.type not in ACCEPTED_TYPES:
            raise KrcError(f"{where}: unknown schema type {node.type!r}; fix the CRD")
        node.accepted = ACCEPTED_TYPES[node.type]

    properties = schema.get("properties")
    if properties:
        node.properties = LazyNodes(properties, where, value_only)
        node.property_names = tuple(sorted(properties))
        if not value_only:
            node.defaults = tuple((name, sub["default"]) for name, sub in properties.items()
                                  if isinstance(sub, dict) and "default" in sub)
    additional = schema.get("additionalProperties")
    if additional is True:
        node._additional = True
    items = schema.get("items")
    if isinstance(items, dict) or isinstance(additional, dict):
        node._lazy = (items, additional, where, value_only)
    node.required = tuple(schema.get("required") or ())

    _compile_value_checks(node, schema, where)
    if not (node.type == "int-or-string" and _is_int_or_string_pair(schema.get("anyOf"))):
        node.any_of = tuple(_compile(s, where, True) for s in schema.get("anyOf") or ())
    node.all_of = tuple(_compile(s, where, True) for s in schema.get("allOf") or ())
    node.one_of = tuple(_compile(s, where, True) for s in schema.get("oneOf") or ())
    if isinstance(schema.get("not"), dict):
        node.not_ = _compile(schema["not"], where, True)
    node.list_type = str(schema.get("x-kubernetes-list-type", ""))
    node.map_keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
    node.rules = cel.compile_rules(schema.get("x-kubernetes-validations"), where)
    return node


def expand_all(node: SchemaNode) -> None:
    """Compile every child now (children are otherwise compiled when a walk first reaches them)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.properties:
            stack.extend(current.properties[name] for name in current.properties)
        for child in (current.items, current.additional, *current.any_of, *current.all_of, *current.one_of,
                      current.not_):
            if isinstance(child, SchemaNode):
                stack.append(child)


def _compile_value_checks(node: SchemaNode, schema: dict[str, Any], where: str) -> None:
    if "enum" in schema:
        values = list(schema["enum"] or [])
        try:
            node.enum = frozenset(enum_key(v) for v in values)
        except TypeError:
            node.enum = tuple(values)
        node.enum_strings = tuple(v for v in values if isinstance(v, str))
        node.enum_text = ", ".join(repr(v) if not isinstance(v, str) else f"'{v}'" for v in values)
    if "pattern" in schema:
        node.pattern_text = str(schema["pattern"])
        try:
            node.pattern = schema_regex(node.pattern_text)  # as the API server reads it
        except re.error as err:
            raise KrcError(f"{where}: pattern {node.pattern_text!r} is not a valid regex ({err}); fix the CRD") from err
    fmt = str(schema.get("format", ""))
    node.format_name = fmt
    node.string_format = string_formats.STRING_FORMATS.get(fmt)
    node.integer_range = string_formats.INTEGER_FORMATS.get(fmt)
    node.minimum = schema.get("minimum")
    node.maximum = schema.get("maximum")
    node.exclusive_minimum = bool(schema.get("exclusiveMinimum", False))
    node.exclusive_maximum = bool(schema.get("exclusiveMaximum", False))
    node.multiple_of = schema.get("multipleOf")
    node.min_length = schema.get("minLength")
    node.max_length = schema.get("maxLength")
    node.min_items = schema.get("minItems")
    node.max_items = schema.get("maxItems")
    node.min_properties = schema.get("minProperties")
    node.max_properties = schema.get("maxProperties")
    node.unique_items = bool(schema.get("uniqueItems", False))
    node.scalar_checks = any(x is not None for x in (
        node.enum, node.pattern, node.string_format, node.integer_range, node.minimum, node.maximum,
        node.multiple_of, node.min_length, node.max_length))
