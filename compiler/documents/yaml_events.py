"""YAML streams of plain data straight from libyaml's event parser: the fast path of `yamlio.load_all`.

PyYAML's CSafeLoader parses in C but composes a node graph and constructs every node in Python through the
generic resolver. The YAML krc reads in bulk (a chart's 4 MB of CRDs, Helm's output for every environment, golden
files, template output) is plain data: no anchors, aliases, tags or merge keys. `plain_documents` builds the same
dicts and lists straight from the C parser's events and resolves each distinct plain scalar once (schemas repeat
`type: string` thousands of times), about three times faster. For anything outside that subset (or near the
input bounds, or invalid) it answers None and `yamlio.load_all` takes the composed path, which decides, with its
errors and bounds: the result is always what the safe loader would give.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import yaml

from ..diagnostics.problems import Location
from ..settings import limits

if TYPE_CHECKING:
    from yaml._yaml import CParser

_CParser: type[CParser] | None
try:
    from yaml._yaml import CParser as _CParser  # where yaml.cyaml takes it from
except ImportError:  # PyYAML built without libyaml
    _CParser = None


class _Unsupported(Exception):
    """A YAML feature the fast path does not handle; the safe loader takes over."""


class _ScalarResolver(yaml.SafeLoader):
    """Resolves and constructs one plain scalar with the safe loader's own rules (YAML 1.1 bools, ints...),
    remembering each answer: every value it makes is immutable (text, numbers, booleans, null, dates), so one
    answer serves every file a process reads (environment files repeat their keys and most values)."""

    def __init__(self) -> None:
        super().__init__("")
        self.cache: dict[str, Any] = {}

    def plain(self, value: str) -> Any:
        try:
            return self.cache[value]
        except KeyError:
            pass
        if len(self.cache) >= _SCALARS_KEPT:  # a long-lived process (the Argo CD plugin) stays bounded
            self.cache.clear()
        # PyYAML's stubs leave Resolver.resolve unannotated; it returns the tag as a str
        tag: str = self.resolve(yaml.ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
        node = yaml.ScalarNode(tag, value)
        try:
            result = value if tag == "tag:yaml.org,2002:str" else self.construct_object(node, deep=True)
        except (ValueError, OverflowError):  # a date YAML cannot make (2024-13-45): the composed path reports it
            raise _Unsupported from None
        self.cache[value] = result
        return result


_SCALARS_KEPT = 200_000
_RESOLVERS = threading.local()  # the safe loader's construction keeps state: one resolver per thread


def _resolver() -> _ScalarResolver:
    try:
        found: _ScalarResolver = _RESOLVERS.resolver
    except AttributeError:
        found = _RESOLVERS.resolver = _ScalarResolver()
    return found


Positions = dict[Any, Location]


def _documents(text: str, resolver: _ScalarResolver, filename: str | None = None,
               keep: frozenset[str] | None = None) -> list[tuple[Any, Positions]]:
    """Every document with, given `filename`, the place of every value as yamlio's positioned loader records it (a
    map entry at its key, a list item at itself); duplicate keys, an error there, are left to that loader. Without
    a filename the places are not recorded (the hot path of plain_stream). Given `keep`, a root map holds only
    those keys: the others' values are parsed (and held to the same rules) but not built."""
    if _CParser is None:  # plain_documents checks first; this tells mypy
        raise _Unsupported
    parser = _CParser(text)
    get_event = parser.get_event
    plain = resolver.plain
    placed = filename is not None
    shown = filename or ""  # what places name (only when placed)
    docs: list[tuple[Any, Positions]] = []
    positions: Positions = {}
    # each frame: [container, pending key or marker, path (placed only)]; mappings wait for a key, then its value
    stack: list[list[Any]] = []
    no_key = object()
    depth_limit, node_limit = limits.YAML_DEPTH.value, limits.YAML_NODES.value
    nodes = 0  # over the whole stream, so at least each document's count (the bound is per document)
    try:
        while True:
            # dispatched on the exact event class below, which is faster than isinstance on this hot path but does
            # not narrow the type for mypy: the event is read untyped
            event: Any = get_event()
            if event is None:
                break
            kind = type(event)
            if kind is yaml.ScalarEvent:
                if event.anchor is not None or (event.tag is not None and event.tag != "!"):
                    raise _Unsupported
                nodes += 1
                if nodes > node_limit:
                    raise _Unsupported
                value: Any = plain(event.value) if event.implicit[0] and not event.style else event.value
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                if event.anchor is not None or event.tag is not None:
                    raise _Unsupported
                path = None
                if placed:
                    path = _child_path(stack)
                    if not stack or type(stack[-1][0]) is list:  # a map entry's place is its key's, set already
                        positions[path] = _place(shown, event)
                stack.append([{} if kind is yaml.MappingStartEvent else [], no_key, path])
                nodes += 1
                # its children sit one level deeper: near the bound, the composed path judges (and reports)
                if len(stack) >= depth_limit or nodes > node_limit:
                    raise _Unsupported
                continue
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                value = stack.pop()[0]
            elif kind is yaml.AliasEvent:
                raise _Unsupported
            elif kind is yaml.DocumentEndEvent:
                positions = {}
                continue
            else:  # stream boundaries and a document's start
                continue
            if not stack:
                if placed and kind is yaml.ScalarEvent:
                    positions[()] = _place(shown, event)
                docs.append((value, positions))
                continue
            frame = stack[-1]
            container = frame[0]
            if type(container) is list:
                if placed and kind is yaml.ScalarEvent:
                    positions[(*frame[2], len(container))] = _place(shown, event)
                container.append(value)
            elif frame[1] is no_key:
                # a merge key is a plain `<<` (a quoted '<<' is a key like any other); a key that is not a str,
                # int, float or bool, or one given twice, is left to the composed path too
                merge = value == "<<" and kind is yaml.ScalarEvent and event.implicit[0] and not event.style
                if merge or not isinstance(value, (str, int, float, bool)) or (placed and value in container):
                    raise _Unsupported
                if keep is not None and len(stack) == 1 and value not in keep:
                    nodes = _skip_value(get_event, plain, len(stack), nodes, depth_limit, node_limit)
                    continue
                frame[1] = value
                if placed:  # the key's place: where readers of a map entry look
                    positions[(*frame[2], value)] = _place(shown, event)
            else:
                container[frame[1]] = value
                frame[1] = no_key
    finally:
        parser.dispose()
    return docs


def _skip_value(get_event: Any, plain: Any, depth: int, nodes: int, depth_limit: int, node_limit: int) -> int:
    """Read one value's events without building it, by the same rules as building it (no anchors, aliases or tags,
    within the bounds, every plain scalar resolved: one the safe loader refuses is refused here too); the node
    count after it."""
    open_collections = 0
    while True:
        event: Any = get_event()
        kind = type(event)
        if kind is yaml.ScalarEvent:
            if event.anchor is not None or (event.tag is not None and event.tag != "!"):
                raise _Unsupported
            if event.implicit[0] and not event.style:
                plain(event.value)
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            if event.anchor is not None or event.tag is not None:
                raise _Unsupported
            open_collections += 1
            if depth + open_collections >= depth_limit:
                raise _Unsupported
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            open_collections -= 1
            if open_collections == 0:
                return nodes
            continue
        else:  # an alias, or the stream ending inside a value
            raise _Unsupported
        nodes += 1
        if nodes > node_limit:
            raise _Unsupported
        if open_collections == 0:
            return nodes


def _place(filename: str, event: Any) -> Location:
    mark = event.start_mark
    return Location(filename, mark.line + 1, mark.column + 1)


def _child_path(stack: list[list[Any]]) -> tuple[Any, ...]:
    """The path of the value about to start, from the innermost open container."""
    if not stack:
        return ()
    container, key, path = stack[-1]
    step = len(container) if type(container) is list else key
    return (*path, step)


def first_too_deep(text: str, filename: str) -> Location | None:
    """Where the stream first nests deeper than KRC_MAX_YAML_DEPTH, in document order (a key or value one level
    below its map or list, as the composed bounds check counts), found from the parser's events before anything is
    composed: composing 10,000 nested lists alone takes half a second. An alias is not judged where it stands (the
    composed check judges the node it names, where the anchor stands). None when nothing is too deep, or the stream
    stops being valid YAML first (the composed path then reports that)."""
    if _CParser is None:
        return None
    parser = _CParser(text)
    get_event = parser.get_event
    limit = limits.YAML_DEPTH.value
    depth = 0  # open collections
    try:
        while True:
            event: Any = get_event()
            if event is None:
                return None
            kind = type(event)
            if kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                depth -= 1
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent or kind is yaml.ScalarEvent:
                if depth >= limit:  # this node sits at depth + 1
                    return _place(filename, event)
                if kind is not yaml.ScalarEvent:
                    depth += 1
    except yaml.YAMLError:
        return None
    finally:
        parser.dispose()


def positioned_documents(text: str, filename: str) -> list[tuple[Any, dict[Any, Location]]] | None:
    """Every document of a stream of plain data with the place of every value, equal to what
    yamlio.load_all_with_positions gives; None when the stream is not plain data, has a duplicate key, comes
    near the input bounds or is not valid YAML (that loader then decides, and reports the error)."""
    if _CParser is None:
        return None
    try:
        return _documents(text, _resolver(), filename)
    except (_Unsupported, yaml.YAMLError):
        return None


def plain_stream(text: str, keep: frozenset[str] | None = None) -> list[Any] | None:
    """Every document of a stream of plain data (None for an empty or null one), equal to what the safe loader
    gives; None when the stream is not plain data, comes near the input bounds or is not valid YAML (the caller's
    composed path then decides, and reports the error). Given `keep`, a root map holds only those keys (what the
    safe loader gives, without the others)."""
    if _CParser is None:
        return None
    try:
        return [data for data, _ in _documents(text, _resolver(), keep=keep)]
    except (_Unsupported, yaml.YAMLError):
        return None


def plain_documents(text: str) -> list[Any] | None:
    """Every non-empty document of a stream of plain data, as plain_stream."""
    stream = plain_stream(text)
    return None if stream is None else [doc for doc in stream if doc is not None]
