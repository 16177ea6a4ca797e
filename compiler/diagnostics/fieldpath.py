"""Field paths inside an object, as the validator builds them and as problems show them.

Convention (used by every problem this package reports): map keys are joined with dots, list items are shown
by their index in brackets, exactly as the API server reports them:
``spec.workerGroupSpecs[0].template.spec.containers[1].image``. Indexes, not item names, because they are
unambiguous and map straight onto the positions `yamlio.load_with_positions` records (see `path_tuple`).
A key that is not a plain identifier (labels, annotations, rayStartParams keys) is shown quoted in brackets:
``metadata.labels["app.kubernetes.io/name"]``.

While walking, a path is a cons cell ``(parent, segment)`` so descending costs one small tuple; it is turned
into text only when a problem is reported.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

LocationT = TypeVar("LocationT")

# (parent, segment) or None for the document root
LinkedPath = tuple[Any, Any] | None

_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")  # whole key (fullmatch: `$` would let "name\n" pass)
_SEGMENT = re.compile(r'\.?([A-Za-z_$][A-Za-z0-9_$-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


def path_tuple(path: LinkedPath) -> tuple[Any, ...]:
    segments = []
    while path is not None:
        path, segment = path
        segments.append(segment)
    segments.reverse()
    return tuple(segments)


def render(segments: tuple[Any, ...]) -> str:
    out: list[str] = []
    for segment in segments:
        if isinstance(segment, int):
            out.append(f"[{segment}]")
        elif _PLAIN_KEY.fullmatch(segment):
            out.append(f".{segment}" if out else segment)
        else:
            out.append(f"[{json.dumps(segment, ensure_ascii=False)}]")
    return "".join(out)


def parse(text: str) -> tuple[Any, ...]:
    """The segments of a rendered path: ``render(parse(p)) == p`` for every path this package reports."""
    segments: list[Any] = []
    pos = 0
    while pos < len(text):
        match = _SEGMENT.match(text, pos)
        if not match or match.end() == pos:
            raise ValueError(f"not a field path: {text!r}")
        key, index, quoted = match.groups()
        segments.append(key if key is not None else int(index) if index is not None else json.loads(quoted))
        pos = match.end()
    return tuple(segments)


def nearest(lookup: Callable[[tuple[Any, ...]], LocationT | None], segments: tuple[Any, ...]) -> LocationT | None:
    """What `lookup` knows of a field, else of its closest ancestor: the one "nearest known location" search
    every part of krc uses (a missing field points at its parent)."""
    for end in range(len(segments), -1, -1):
        found = lookup(tuple(segments[:end]))
        if found is not None:
            return found
    return None


def nearest_location(positions: Mapping[tuple[Any, ...], LocationT], segments: tuple[Any, ...]) -> LocationT | None:
    return nearest(positions.get, segments)


# List items by name: how the environment file, provenance, policies and the review name an item of a list
# (`clusters[ray-cpu-demo]`, `workerGroupSpecs[gpu]`), one precedence everywhere.
NAME_KEYS = ("name", "groupName")


def item_name(item: Any) -> str | None:
    """The name a list item is matched by: `name`, else `groupName` (KubeRay worker groups inside `raw`)."""
    if not isinstance(item, dict):
        return None
    for key in NAME_KEYS:
        if isinstance(item.get(key), str):
            return str(item[key])
    return None


def is_named_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(item_name(item) is not None for item in value)
