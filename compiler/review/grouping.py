"""The same change in many places, said once: "image a -> b in 4 objects (12 containers)".

A bumped image or Ray version repeats in every container and every cluster of an environment; listed field by
field it buries whatever else changed. Changes of one field name from the same old to the same new value are
grouped when they occur at least twice; the reports show the group once and leave those rows out of each object.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..crddiff import CrdChange
from .fielddiff import FieldChange

_LAST_KEY = re.compile(r"(?:^|\.)([A-Za-z_][A-Za-z0-9_-]*)$")
_ENV_VALUE = re.compile(r"env\[name=([^\]]+)\]\.value$")
_CONTAINER = re.compile(r"[cC]ontainers\[[^\]]*\]\.image$")


@dataclass(frozen=True)
class ChangeGroup:
    field: str  # what changed, as a reviewer names it: image, rayVersion, env RAY_VERSION
    old: Any
    new: Any
    places: tuple[tuple[str, str], ...]  # (object ref, field path), in report order

    @property
    def objects(self) -> int:
        return len({ref for ref, _ in self.places})

    @property
    def unit(self) -> str:
        return "containers" if all(_CONTAINER.search(path) for _, path in self.places) else "places"

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.field, "old": self.old, "new": self.new, "objects": self.objects,
                "occurrences": len(self.places), "unit": self.unit,
                "places": [{"ref": ref, "path": path} for ref, path in self.places]}


def field_name(path: str) -> str:
    env = _ENV_VALUE.search(path)
    if env:
        return f"env {env[1]}"
    found = _LAST_KEY.search(path)
    return found[1] if found else path


def group_changes(changes: Iterable[tuple[str, Sequence[FieldChange]]]) -> tuple[ChangeGroup, ...]:
    """Groups of identical scalar changes over (object ref, its field changes), largest first."""
    found: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    values: dict[tuple[str, str, str], tuple[Any, Any]] = {}
    for ref, fields in changes:
        for change in fields:
            if change.op != "changed" or isinstance(change.old, (dict, list)) or isinstance(change.new, (dict, list)):
                continue
            key = (field_name(change.path), json.dumps(change.old, default=str), json.dumps(change.new, default=str))
            found.setdefault(key, []).append((ref, change.path))
            values[key] = (change.old, change.new)
    groups = [ChangeGroup(key[0], *values[key], tuple(places)) for key, places in found.items() if len(places) > 1]
    return tuple(sorted(groups, key=lambda g: (-len(g.places), g.field, json.dumps(g.new, default=str))))


def grouped_places(groups: Iterable[ChangeGroup]) -> set[tuple[str, str]]:
    return {place for group in groups for place in group.places}


@dataclass(frozen=True)
class CrdChangeGroup:
    """One CRD change repeated over CRDs, versions and embedded Pod templates: `workloadRef` removed in 17 places."""

    check: str
    field: str
    message: str
    places: tuple[str, ...]  # "<crd> <version> <path>"

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.check, "field": self.field, "message": self.message, "count": len(self.places),
                "places": list(self.places)}


def group_crd_changes(changes: Iterable[CrdChange]) -> tuple[CrdChangeGroup, ...]:
    """The changes grouped by check, field name and message, in the order their first member comes."""
    found: dict[tuple[str, str, str], list[str]] = {}
    for change in changes:
        key = (change.check, field_name(change.path.replace("[*]", "")) if change.path else "", change.message)
        found.setdefault(key, []).append(" ".join(p for p in (change.crd, change.version, change.path) if p))
    return tuple(CrdChangeGroup(*key, tuple(places)) for key, places in found.items())
