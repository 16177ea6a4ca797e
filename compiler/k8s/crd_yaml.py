"""Fast loading of CRD YAML: the C event parser plus a minimal constructor.

A chart's CRDs are about 4 MB of YAML. PyYAML's CSafeLoader parses in C but constructs every node in Python
through the generic resolver, which takes about a second per chart. CRD files are plain data (no anchors, tags
or merge keys), so this module builds the same dicts and lists straight from the C parser's events and resolves
each distinct plain scalar once (schemas repeat `type: string` and friends thousands of times). Anything outside
that subset falls back to `yamlio.load_all`, so the result always equals what the safe loader would give.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml

from .. import limits, yamlio
from ..problems import KrcError

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
    """Resolves and constructs one plain scalar with the safe loader's own rules (YAML 1.1 bools, ints...)."""

    def __init__(self) -> None:
        super().__init__("")
        self.cache: dict[str, Any] = {}

    def plain(self, value: str) -> Any:
        try:
            return self.cache[value]
        except KeyError:
            pass
        # PyYAML's stubs leave Resolver.resolve unannotated; it returns the tag as a str
        tag: str = self.resolve(yaml.ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
        node = yaml.ScalarNode(tag, value)
        result = value if tag == "tag:yaml.org,2002:str" else self.construct_object(node, deep=True)
        self.cache[value] = result
        return result


def _documents(text: str, resolver: _ScalarResolver) -> list[Any]:
    if _CParser is None:  # load_crd_documents checks first; this tells mypy
        raise _Unsupported
    parser = _CParser(text)
    get_event = parser.get_event
    plain = resolver.plain
    docs: list[Any] = []
    # each frame: [container, pending key or marker]; mappings wait for a key, then for its value
    stack: list[list[Any]] = []
    no_key = object()
    depth_limit = limits.YAML_DEPTH.value
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
                value: Any = plain(event.value) if event.implicit[0] and not event.style else event.value
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                if event.anchor is not None or event.tag is not None:
                    raise _Unsupported
                stack.append([{} if kind is yaml.MappingStartEvent else [], no_key])
                if len(stack) > depth_limit:
                    raise _Unsupported  # the safe loader reports it, with its position and limit
                continue
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                value = stack.pop()[0]
            elif kind is yaml.AliasEvent:
                raise _Unsupported
            else:  # stream and document boundaries
                continue
            if not stack:
                docs.append(value)
                continue
            frame = stack[-1]
            container = frame[0]
            if type(container) is list:
                container.append(value)
            elif frame[1] is no_key:
                if value == "<<" or not isinstance(value, (str, int, float, bool)):
                    raise _Unsupported
                frame[1] = value
            else:
                container[frame[1]] = value
                frame[1] = no_key
    finally:
        parser.dispose()
    return [doc for doc in docs if doc is not None]


def load_crd_documents(text: str, source: str) -> list[Any]:
    """Every non-empty document of a YAML stream, equal to `yamlio.load_all(text, source)`, only faster."""
    if _CParser is None:
        return yamlio.load_all(text, source)
    try:
        return _documents(text, _ScalarResolver())
    except _Unsupported:
        return yamlio.load_all(text, source)
    except yaml.YAMLError:
        # the safe loader reports the syntax error with its position, as everywhere else in krc
        yamlio.load_all(text, source)
        raise KrcError(f"invalid YAML in {source}; fix the syntax") from None
