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
from .fielddiff import FieldChange, Match, Step, path_text, step_text

_LAST_KEY = re.compile(r"(?:^|\.)([A-Za-z_][A-Za-z0-9_-]*)$")  # of a CRD change's path (crddiff's text)
_CONTAINER_LISTS = ("containers", "initContainers")


@dataclass(frozen=True)
class ChangeGroup:
    field: str  # what changed, as a reviewer names it: image, rayVersion, env RAY_VERSION
    old: Any
    new: Any
    places: tuple[tuple[str, str], ...]  # (object ref, field path), in report order
    unit: str = "places"  # "containers" when every place is a container's image

    @property
    def objects(self) -> int:
        return len({ref for ref, _ in self.places})

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.field, "old": self.old, "new": self.new, "objects": self.objects,
                "occurrences": len(self.places), "unit": self.unit,
                "places": [{"ref": ref, "path": path} for ref, path in self.places]}


def field_name(where: Sequence[Step]) -> str:
    """What changed, as a reviewer names it: the last key (`image`), or `env NAME` for an environment variable."""
    if len(where) >= 3 and where[-1] == "value" and where[-3] == "env" and isinstance(where[-2], Match) \
            and where[-2].key == "name":
        return f"env {where[-2].value}"
    last = where[-1] if where else ""
    return last if isinstance(last, str) and step_text(last).startswith(".") else path_text(where)


def _container_image(where: Sequence[Step]) -> bool:
    return len(where) >= 3 and where[-1] == "image" and where[-3] in _CONTAINER_LISTS


def group_changes(changes: Iterable[tuple[str, Sequence[FieldChange]]]) -> tuple[ChangeGroup, ...]:
    """Groups of identical scalar changes over (object ref, its field changes), largest first."""
    found: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    values: dict[tuple[str, str, str], tuple[Any, Any]] = {}
    images: dict[tuple[str, str, str], bool] = {}
    for ref, fields in changes:
        for change in fields:
            if change.op != "changed" or isinstance(change.old, (dict, list)) or isinstance(change.new, (dict, list)):
                continue
            key = (field_name(change.where), json.dumps(change.old, default=str), json.dumps(change.new, default=str))
            found.setdefault(key, []).append((ref, change.path))
            values[key] = (change.old, change.new)
            images[key] = images.get(key, True) and _container_image(change.where)
    groups = [ChangeGroup(key[0], *values[key], tuple(places), "containers" if images[key] else "places")
              for key, places in found.items() if len(places) > 1]
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
        found_key = _LAST_KEY.search(change.path.replace("[*]", "")) if change.path else None
        key = (change.check, found_key[1] if found_key else change.path, change.message)
        found.setdefault(key, []).append(" ".join(p for p in (change.crd, change.version, change.path) if p))
    return tuple(CrdChangeGroup(*key, tuple(places)) for key, places in found.items())
