"""Reading a manifest whose shape nothing has checked: golden/ is edited by hand (and by an attacker, in a pull
request), so the review reads what is there and treats a field of the wrong type as absent, never crashes on it.
"""
from __future__ import annotations

from typing import Any


def mapping(value: Any) -> dict[str, Any]:
    """`value` when it is a map, else an empty one."""
    return value if isinstance(value, dict) else {}


def sequence(value: Any) -> list[Any]:
    """`value` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def field(document: Any, *path: str) -> dict[str, Any]:
    """The map at `path` below `document` (each step a map key), or an empty one when any step is not a map."""
    current = mapping(document)
    for step in path:
        current = mapping(current.get(step))
    return current
