"""How a changed value is shown: a long string around its first difference, a subtree as YAML lines.

A reviewer reads the part of a string that changed: two 400-character `--feature-gates=` arguments that differ at
their end look the same when both are cut at character 300. `around_difference` drops the start both share (it
is said as `…`) and keeps the difference and what follows it, so a cut never falls before the first difference.
"""
from __future__ import annotations

from typing import Any

from ..documents import yamlio

LEAD = 40  # characters of the shared start kept before the first difference, for context
ELLIPSIS = "…"


def _shared_start(old: str, new: str) -> int:
    size = 0
    for a, b in zip(old, new, strict=False):
        if a != b:
            break
        size += 1
    return size


def _shared_end(old: str, new: str, start: int) -> int:
    size = 0
    while size < min(len(old), len(new)) - start and old[-1 - size] == new[-1 - size]:
        size += 1
    return size


def around_difference(old: str, new: str, limit: int) -> tuple[str, str]:
    """`old` and `new`, each at most about `limit` characters, showing where they first differ: the shared
    start past LEAD characters and the shared end past LEAD characters become `…`; a differing middle longer
    than `limit` is cut after the difference's start, never before it."""
    if len(old) <= limit and len(new) <= limit:
        return old, new
    start = _shared_start(old, new)
    end = _shared_end(old, new, start)
    cut_start = max(0, start - LEAD)
    keep_end = max(0, end - LEAD)  # characters of the shared end left out

    def shown(text: str) -> str:
        body = text[cut_start:len(text) - keep_end]
        prefix = ELLIPSIS if cut_start else ""
        suffix = ELLIPSIS if keep_end else ""
        if len(body) > limit:
            body, suffix = body[:max(limit, start - cut_start + LEAD)], ELLIPSIS
        return prefix + body + suffix
    return shown(old), shown(new)


def yaml_lines(value: Any) -> list[str]:
    """A subtree as the YAML lines golden/ files write it."""
    return yamlio.dump(value).rstrip("\n").splitlines()
