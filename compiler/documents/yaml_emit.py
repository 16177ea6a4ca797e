"""Plain data straight to libyaml's emitter as events: how `yamlio.dump` writes what yaml_text leaves, and how
yaml_scalars asks the emitter the text of a scalar.

PyYAML's dumper first builds a node graph in Python (the representer, with its alias bookkeeping), and its C
serializer then asks the Python resolver twice per scalar how the value would read back. Every file krc writes is
plain data (maps, lists, text, numbers, booleans, null) without shared parts, so `plain_text` builds the emitter's
events directly and resolves each distinct scalar once. The events are the ones PyYAML's serializer would emit
for the canonical dumper (sorted keys, block style, multi-line text as a literal block), so the bytes are the
same; for anything else (other types, a list or map that appears twice in a document) it answers None and
`yamlio.dump` takes PyYAML's path, which decides.
"""
from __future__ import annotations

import io
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from yaml._yaml import CEmitter

_CEmitter: type[CEmitter] | None
try:
    from yaml._yaml import CEmitter as _CEmitter  # where yaml.cyaml takes it from
except ImportError:  # PyYAML built without libyaml
    _CEmitter = None

STR, INT, BOOL, NULL, FLOAT = (f"tag:yaml.org,2002:{t}" for t in ("str", "int", "bool", "null", "float"))
MAP, SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"
_STR_IMPLICIT = (True, True)  # text that reads back as text when plain: no tag, any style
_STR_QUOTED = (False, True)  # text that would read back as something else when plain ('true', '1'): quoted


class Unsupported(Exception):
    """Data a fast path does not write; the next takes over (yaml_text, then these events, then PyYAML's dumper)."""


class _Resolver(yaml.resolver.Resolver):
    """How a scalar reads back with the dumper's own resolver, remembered per value (manifests repeat their
    keys and values many times)."""

    def __init__(self) -> None:
        super().__init__()
        self.plain_tags: dict[str, str] = {}

    def plain_tag(self, value: str) -> str:
        try:
            return self.plain_tags[value]
        except KeyError:
            pass
        if len(self.plain_tags) > 200_000:  # a long-lived process (the Argo CD plugin) stays bounded
            self.plain_tags.clear()
        # PyYAML's stubs leave Resolver.resolve unannotated; it returns the tag as a str
        tag: str = self.resolve(yaml.ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
        self.plain_tags[value] = tag
        return tag


_RESOLVER = _Resolver()


def plain_reads_as_text(value: str) -> bool:
    """Whether text written plain reads back as text (not 'true', '1', '~', '2024-01-01')."""
    return _RESOLVER.plain_tag(value) == STR


def _float_text(value: float) -> str:
    """The float as YAML 1.1 writes it (.nan, .inf, and an exponent always after a decimal point)."""
    if value != value:
        return ".nan"
    if value in (float("inf"), float("-inf")):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text


# The events are read, never changed, by the emitter: each distinct one is made once and handed out again
MAP_START = yaml.MappingStartEvent(None, MAP, True, flow_style=False)
MAP_END = yaml.MappingEndEvent()
SEQ_START = yaml.SequenceStartEvent(None, SEQ, True, flow_style=False)
SEQ_END = yaml.SequenceEndEvent()
_EVENTS_KEPT = 200_000  # per kind, as _Resolver's: a long-lived process (the Argo CD plugin) stays bounded


def _scalar_event(tag: str, value: str, style: str | None = None) -> yaml.ScalarEvent:
    plain = _RESOLVER.plain_tag(value) == tag
    if tag == STR:
        implicit = _STR_IMPLICIT if plain else _STR_QUOTED
    else:  # a number, boolean or null reads back as itself only when plain
        implicit = (plain, False)
    return yaml.ScalarEvent(None, tag, implicit, value, style=style)


_TEXT_EVENTS: dict[str, yaml.ScalarEvent] = {}
_INT_EVENTS: dict[int, yaml.ScalarEvent] = {}  # by int, never bool (True == 1): bools have events of their own
_FIXED_EVENTS = {True: _scalar_event(BOOL, "true"), False: _scalar_event(BOOL, "false"),
                 None: _scalar_event(NULL, "null")}


def _kept(events: dict[Any, yaml.ScalarEvent], key: Any, event: yaml.ScalarEvent) -> yaml.ScalarEvent:
    if len(events) >= _EVENTS_KEPT:
        events.clear()
    events[key] = event
    return event


def scalar_event(data: Any) -> yaml.ScalarEvent:
    """The event PyYAML's serializer would emit for one scalar of plain data (text, integer, boolean, null,
    float), the one `_Events.add` emits; yaml_scalars asks the emitter with it how the scalar is written."""
    kind = type(data)
    if kind is str:
        return _TEXT_EVENTS.get(data) or _kept(_TEXT_EVENTS, data,
                                               _scalar_event(STR, data, "|" if "\n" in data else None))
    if kind is int:
        return _INT_EVENTS.get(data) or _kept(_INT_EVENTS, data, _scalar_event(INT, str(data)))
    if kind is bool or data is None:
        return _FIXED_EVENTS[data]
    if kind is float:
        return _scalar_event(FLOAT, _float_text(data))
    raise Unsupported


class _Events:
    """One document's events, handed to the emitter as they come."""

    def __init__(self, emit: Callable[[Any], None]) -> None:
        self.emit = emit
        self.containers: set[int] = set()  # ids of the maps and lists seen: a second sighting would be an alias

    def add(self, data: Any) -> None:
        kind = type(data)
        if kind is str:
            event = _TEXT_EVENTS.get(data) or _kept(_TEXT_EVENTS, data,
                                                    _scalar_event(STR, data, "|" if "\n" in data else None))
            self.emit(event)
        elif kind is int:
            self.emit(_INT_EVENTS.get(data) or _kept(_INT_EVENTS, data, _scalar_event(INT, str(data))))
        elif kind is bool or data is None:
            self.emit(_FIXED_EVENTS[data])
        elif kind is float:
            self.emit(_scalar_event(FLOAT, _float_text(data)))
        elif kind is dict or kind is list:
            if id(data) in self.containers:
                raise Unsupported
            self.containers.add(id(data))
            if kind is dict:
                self._mapping(data)
            else:
                self.emit(SEQ_START)
                for item in data:
                    self.add(item)
                self.emit(SEQ_END)
        else:
            raise Unsupported

    def _mapping(self, data: dict[Any, Any]) -> None:
        try:
            items = sorted(data.items())
        except TypeError:  # keys of types that do not compare: PyYAML writes them in their order; left to it
            raise Unsupported from None
        self.emit(MAP_START)
        for key, value in items:
            self.add(key)
            self.add(value)
        self.emit(MAP_END)


def emitted(events: list[yaml.Event], width: int) -> str:
    """The text of one document made of `events` (its start and end events added), as the emitter writes it."""
    if _CEmitter is None:
        raise Unsupported
    stream = io.StringIO()
    emitter = _CEmitter(stream, width=width, allow_unicode=True)
    try:
        emitter.emit(yaml.StreamStartEvent())
        emitter.emit(yaml.DocumentStartEvent(explicit=False))
        for event in events:
            emitter.emit(event)
        emitter.emit(yaml.DocumentEndEvent(explicit=False))
        emitter.emit(yaml.StreamEndEvent())
    finally:
        emitter.dispose()
    return stream.getvalue()


def plain_text(data: Any, width: int) -> str | None:
    """The canonical text of one document of plain data, or None when it is not plain data (the caller's
    PyYAML dumper then writes it)."""
    if _CEmitter is None:
        return None
    stream = io.StringIO()
    emitter = _CEmitter(stream, width=width, allow_unicode=True)
    try:
        emitter.emit(yaml.StreamStartEvent())
        emitter.emit(yaml.DocumentStartEvent(explicit=False))
        _Events(emitter.emit).add(data)
        emitter.emit(yaml.DocumentEndEvent(explicit=False))
        emitter.emit(yaml.StreamEndEvent())
    except (Unsupported, RecursionError):
        return None  # what was written so far is dropped with the stream
    finally:
        emitter.dispose()
    return stream.getvalue()
