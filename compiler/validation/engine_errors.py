"""The engine's verdict on one custom resource, as krc findings: a rule id, the field, the API server's words, a fix.

The message is what the API server answers (`<field>: <error>`, its wording); the rule id says which kind of
check failed (schema/type, schema/enum, ...; checks.py lists them) and the help line what to change. Errors the
server reports without a field (go-openapi's format and anyOf errors name it inside the text) are placed at the
field they name. Per field one finding per rule, and an anyOf/oneOf/allOf summary only when nothing more precise
is said about that field. The server's "some validation rules were not checked" note says nothing to fix: it is
dropped. A null the server drops silently (a non-nullable field without a default) is a schema/nullable warning.
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import jsontext

Segments = tuple[str | int, ...]

_NAMED_IN_TEXT = (re.compile(r" in ([^\s\"']+)$"), re.compile(r'^"([^"]+)" must'))
_SUPPORTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_TYPE = re.compile(r"must be of type ([\w,-]+)")
_FORMAT = re.compile(r"must be of type [\w-]+ with format|"
                     r"must be of type (?!(?:integer|number|string|boolean|object|array)\b)[\w-]+")
_BOUNDS = ("should be greater than", "should be less than", "should have at least", "should have at most",
           "should be at least", "should be at most", "should be a multiple of", "must have at most",
           "must have at least", "may not be more than", "must be no more than")
_COMBINATORS = {"(anyOf)": "schema/any-of", "(oneOf)": "schema/one-of", "(allOf)": "schema/all-of",
                "(not)": "schema/not"}
_OBJECT_META = ("name", "generateName", "namespace", "labels", "annotations", "ownerReferences", "finalizers",
                "uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
                "deletionGracePeriodSeconds", "managedFields", "selfLink")
_EXPECTED = {"integer": "an integer", "number": "a number", "string": "a string", "boolean": "true or false",
             "object": "a map", "array": "a list", "integer,string": "an integer or a quoted string"}


@dataclass(frozen=True)
class Finding:
    segments: Segments
    rule: str
    message: str
    severity: str
    help: str


def resolve(document: Any, segments: Segments) -> Segments:
    """The segments as keys of `document`: the server prints map keys with dots (nvidia.com/gpu) unquoted, so a
    name split at its dots is joined again where the document has the joined key."""
    out: list[str | int] = []
    node, i = document, 0
    while i < len(segments):
        segment = segments[i]
        if isinstance(node, dict) and isinstance(segment, str) and segment not in node:
            for j in range(i + 2, len(segments) + 1):
                parts = segments[i:j]
                if all(isinstance(p, str) for p in parts) and ".".join(map(str, parts)) in node:
                    segment, i = ".".join(map(str, parts)), j - 1
                    break
        out.append(segment)
        if isinstance(node, dict):
            node = node.get(segment)
        elif isinstance(node, list) and isinstance(segment, int) and 0 <= segment < len(node):
            node = node[segment]
        else:
            node = None
        i += 1
    return tuple(out)


def _segments(error: dict[str, Any], parse: Any) -> Segments:
    path = tuple(s for s in error.get("path") or () if isinstance(s, str | int) and not isinstance(s, bool))
    if path:
        return path
    for pattern in _NAMED_IN_TEXT:
        named = pattern.search(str(error.get("detail") or ""))
        if named:
            return tuple(parse(named.group(1)))
    return ()


def _rule(error: dict[str, Any]) -> str:
    kind, origin, detail = error.get("type"), error.get("origin"), str(error.get("detail") or "")
    field = str(error.get("field") or "")
    if kind == "UnknownField":
        return "schema/unknown-field"
    if origin == "request" and field in ("apiVersion", "kind"):
        return "schema/unknown-kind"
    if kind == "Required":
        return "schema/required"
    if origin == "cel":
        return "schema/cel"
    if origin == "metadata":
        return "schema/metadata"
    if kind == "Duplicate":
        return "schema/duplicate"
    if kind == "NotSupported":
        return "schema/enum"
    if kind in ("TooLong", "TooMany"):
        return "schema/bounds"
    for marker, rule in _COMBINATORS.items():
        if marker in detail:
            return rule
    if "should match" in detail:
        return "schema/pattern"
    if _FORMAT.search(detail) and "(default format)" not in detail:
        return "schema/format"
    if kind == "TypeInvalid" or "must be of type" in detail:
        return "schema/type"
    if any(words in detail for words in _BOUNDS):
        return "schema/bounds"
    return "schema/invalid"


def _help(rule: str, error: dict[str, Any], segments: Segments, siblings: tuple[str, ...]) -> str:
    last = str(segments[-1]) if segments else "the field"
    detail = str(error.get("detail") or "")
    if rule == "schema/unknown-field":
        close = difflib.get_close_matches(last, siblings, n=1)
        hint = f"did you mean '{close[0]}'?" if close else "remove it or check the field name and CRD version"
        return f"the API server would prune it silently; {hint}"
    if rule == "schema/enum" or rule == "schema/unknown-kind":
        supported = _SUPPORTED.findall(detail.partition("supported values:")[2])
        value = _SUPPORTED.search(str(error.get("message") or ""))
        close = difflib.get_close_matches(value.group(1), supported, n=1) if value else []
        if close:
            return f"did you mean '{close[0]}'?"
        return f"use one of: {', '.join(supported)}" if supported else "use a value the CRD allows"
    if rule == "schema/type":
        expected = _TYPE.search(detail)
        words = _EXPECTED.get(expected.group(1), expected.group(1)) if expected else "a value of the declared type"
        if expected and "string" in expected.group(1) and ('"number"' in detail or '"boolean"' in detail):
            return f"give {last} {words}: quote the value"
        return f"give {last} {words}"
    return {
        "schema/required": f"set {last}",
        "schema/cel": "change the object so that the CRD's rule holds (the message is the rule's)",
        "schema/metadata": "fix the object's metadata as the message says",
        "schema/duplicate": "remove the duplicate item, or give it a key of its own",
        "schema/pattern": f"give {last} a value matching the pattern",
        "schema/format": f"give {last} a value of the declared format",
        "schema/bounds": f"keep {last} within the CRD's bounds",
    }.get(rule, f"change {last} as the message says")


def _message(error: dict[str, Any]) -> str:
    field, message = str(error.get("field") or ""), str(error.get("message") or "")
    return message if not field or field in message else f"{field}: {message}"


def _node_at(schema: Any, segments: Segments) -> Any:
    node = schema
    for segment in segments:
        if not isinstance(node, dict):
            return None
        if isinstance(segment, int):
            node = node.get("items")
        elif segment in (node.get("properties") or {}):
            node = node["properties"][segment]
        else:
            node = node.get("additionalProperties")
    return node


def _properties(schema: Any, segments: Segments) -> tuple[str, ...]:
    """The field names the schema declares at `segments` (for a did-you-mean)."""
    if segments[:1] == ("metadata",) and len(segments) == 2:
        return _OBJECT_META
    node = _node_at(schema, segments)
    return tuple(node.get("properties") or {}) if isinstance(node, dict) else ()


def findings(result: dict[str, Any], document: Any, schema_of: Callable[[], Any], parse: Any) -> list[Finding]:
    """krc's findings for the engine's result on `document`; `schema_of` gives the version's openAPIV3Schema (for
    the fields a typo was meant to be), asked only when there are errors (a chart's CRD is decoded only then),
    `parse` reads a field path in the server's notation."""
    found: dict[tuple[Segments, str], Finding] = {}
    errors = [e for e in result.get("errors") or () if e.get("origin") != "skipped"]
    schema = schema_of() if errors else None
    for error in errors:
        segments = resolve(document, _segments(error, parse))
        rule = _rule(error)
        if rule == "schema/invalid" and _has_rules(_node_at(schema, segments)):
            rule = "schema/cel"  # a messageExpression's text: the engine knows only the CRD's fixed messages
        siblings = _properties(schema, segments[:-1]) if rule == "schema/unknown-field" else ()
        found.setdefault((segments, rule), Finding(segments, rule, _message(error), "error",
                                                   _help(rule, error, segments, siblings)))
    precise = {segments for segments, rule in found if rule not in _COMBINATORS.values()}
    out = [f for (segments, rule), f in found.items() if rule not in _COMBINATORS.values() or segments not in precise]
    for text in result.get("warnings") or ():
        rule = "schema/deprecated-version" if "deprecated" in text else "schema/server-warning"
        fix = "move to the version the warning names" if rule == "schema/deprecated-version" else "see the warning"
        # a deprecated version is the user's to fix; other warnings (Argo CD's own finalizer name draws one) are
        # the server's advice, shown as info
        out.append(Finding(("apiVersion",) if rule == "schema/deprecated-version" else (), rule, text,
                           "warning" if rule == "schema/deprecated-version" else "info", fix))
    if jsontext.holds_null(document):  # most objects hold none: not walked for them
        out.extend(_dropped_nulls(document, result.get("object"), (), {f.segments for f in out}))
    return out


def _has_rules(node: Any) -> bool:
    return isinstance(node, dict) and bool(node.get("x-kubernetes-validations"))


def _dropped_nulls(given: Any, stored: Any, at: Segments, reported: set[Segments]) -> list[Finding]:
    """Nulls the server removed without a word: the field is not nullable and has no default."""
    out: list[Finding] = []
    # only a null or a map or list inside can hold one: other values are passed over without a path made for them
    if isinstance(given, dict) and isinstance(stored, dict):
        for key, value in given.items():
            if value is None:
                here = (*at, key)
                if key not in stored and here not in reported:
                    out.append(Finding(here, "schema/nullable", f"{key}: null is dropped: the field is not "
                                       "nullable and has no default, so the API server removes the key", "warning",
                                       f"remove {key}, or give it a value"))
            elif isinstance(value, (dict, list)) and key in stored:
                out.extend(_dropped_nulls(value, stored[key], (*at, key), reported))
    elif isinstance(given, list) and isinstance(stored, list) and len(given) == len(stored):
        for index, (value, kept) in enumerate(zip(given, stored, strict=True)):
            if isinstance(value, (dict, list)):
                out.extend(_dropped_nulls(value, kept, (*at, index), reported))
    return out
