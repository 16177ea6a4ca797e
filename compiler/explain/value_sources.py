"""`krc explain`: where a value of one environment comes from: the layers that set it, the default krc applies
when none does, or, for a field of a rendered object, the template that wrote it and the environment line behind it.

Paths are written as in the environment file, `clusters[ray-cpu-demo].workerGroups[cpu].maxReplicas` (the dotted
form `clusters.ray-cpu-demo.workerGroups.cpu.maxReplicas` is read too). A rendered field is named
`Kind/name:field.path`, e.g. `RayCluster/ray-cpu-demo:spec.workerGroupSpecs[0].maxReplicas`.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import fieldpath
from ..diagnostics.fieldpath import item_name
from ..diagnostics.problems import KrcError, Location, Problem
from ..environment import schema
from ..environment.layering import shown_path
from ..environment.model import Environment
from ..render.provenance import object_positions
from ..render.templates import Render
from . import unset_keys as explain_unset

_BRACKETED = re.compile(r"\[([^\]]*)\]|\.?([^.\[\]]+)")
RENDERED = re.compile(r"^([A-Za-z][A-Za-z0-9]*/[^:]+):(.+)$")


@dataclass(frozen=True)
class Explanation:
    environment: str
    path: str  # in the environment file's notation, or Kind/name:field for a rendered field
    value: Any
    # "set" (a layer wrote it), "default" (krc's default), "unset" (a valid key nobody sets, without a default),
    # "rendered" (a template's output)
    origin: str
    chain: tuple[Location, ...] = ()  # earliest first; for a rendered field: the environment line behind it
    template: str = ""  # the template that produced a rendered field
    description: str = ""  # what the key means (the schema's description)
    notes: tuple[str, ...] = field(default=())

    def as_json(self) -> dict[str, Any]:
        return {"environment": self.environment, "path": self.path, "value": self.value, "origin": self.origin,
                "setBy": [str(location) for location in self.chain], "template": self.template or None,
                "description": self.description or None,
                **({"whenUnset": self.notes[-1].removeprefix("unset: ")} if self.origin == "unset" else {})}


def is_rendered_path(text: str) -> bool:
    return bool(RENDERED.match(text))


def _segments(text: str) -> list[str] | None:
    """`a[b].c` -> ['a', 'b', 'c']; None for a plain dotted path (whose names may contain dots)."""
    if "[" not in text:
        return None
    parts = [bracketed or plain for bracketed, plain in _BRACKETED.findall(text)]
    return [p.strip('"') for p in parts]


def _options(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [str(k) for k in value]
    if isinstance(value, list):
        return [str(item_name(item)) for item in value if item_name(item) is not None]
    return []


def _resolve(env: Environment, text: str) -> tuple[Any, ...]:
    segments = _segments(text)
    if segments is None:
        try:
            return env.resolve_dotted(text)
        except KrcError:
            segments = text.split(".")
    path: list[Any] = []
    value: Any = env.data
    for segment in segments:
        nxt = env.get(tuple(path) + (segment,), _MISSING)
        if nxt is _MISSING and isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
            segment = item_name(value[int(segment)]) or segment
            nxt = env.get(tuple(path) + (segment,), _MISSING)
        if nxt is _MISSING:
            parent_keys = schema.keys_at(tuple(path))
            path.append(segment)
            # a key the schema defines is valid though no layer writes it: explained as a default, or as unset
            if schema.schema_at(tuple(path)) is not None and (
                    segment in parent_keys or "default" in (schema.schema_at(tuple(path)) or {})):
                value = None
                continue
            known = sorted(set(_options(value)) | set(schema.keys_at(tuple(path[:-1]))))
            close = difflib.get_close_matches(segment, known, n=1, cutoff=0.5)
            where = shown_path(env.data, tuple(path[:-1]))
            fix = f"did you mean '{close[0]}'?" if close else f"keys there: {', '.join(known) or 'none'}"
            raise KrcError(Problem(f"environment {env.name} has no '{segment}' in {where}", help=fix))
        path.append(segment)
        value = nxt
    return tuple(path)


_MISSING = object()


def explain_environment(env: Environment, text: str) -> Explanation:
    """A value of the resolved environment, with every layer that set it, or the default krc applies."""
    path = _resolve(env, text)
    node = schema.schema_at(path) or {}
    description = str(node.get("description", ""))
    chain = tuple(env.chain_of(path))
    value = env.get(path, _MISSING)
    if value is _MISSING or not chain and "default" in node:
        if "default" not in node:
            return Explanation(env.name, shown_path(env.data, path), None, "unset", description=description,
                               notes=("no layer sets it and krc has no default for it",
                                      f"unset: {explain_unset.meaning(env, path)}"))
        return Explanation(env.name, shown_path(env.data, path), node["default"], "default",
                           description=description, notes=("no layer sets it: this is the default",))
    return Explanation(env.name, shown_path(env.data, path), value, "set", chain, description=description)


def explain_rendered(render: Render, text: str) -> Explanation:
    """A field of a rendered object: its value, the template that made it, the environment line behind it."""
    match = RENDERED.match(text)
    if not match:
        raise KrcError(Problem(f"'{text}' is not Kind/name:field", help="e.g. RayCluster/ray-cpu-demo:spec"))
    ref, field_text = match.groups()
    kind, _, name = ref.partition("/")
    candidates = [o for o in render.objects if o.ref == ref
                  or (o.document.get("kind") == kind and (o.document.get("metadata") or {}).get("name") == name)]
    if not candidates:
        refs = sorted(o.ref for o in render.objects)
        close = difflib.get_close_matches(ref, refs, n=1, cutoff=0.5)
        raise KrcError(Problem(f"environment {render.environment.name} renders no {ref}",
                               help=f"did you mean '{close[0]}'?" if close else f"objects: {', '.join(refs)}"))
    obj = candidates[0]
    try:
        segments = fieldpath.parse(field_text)
    except ValueError as err:
        raise KrcError(Problem(f"'{field_text}' is not a field path",
                               help="write it as the API server does: spec.workerGroupSpecs[0].maxReplicas")) from err
    value: Any = obj.document
    for depth, step in enumerate(segments):
        ok = (isinstance(value, dict) and step in value) or (
            isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value))
        if not ok:
            known = [str(k) for k in value] if isinstance(value, dict) else []
            close = difflib.get_close_matches(str(step), known, n=1, cutoff=0.5)
            where = fieldpath.render(segments[:depth]) or "the object"
            raise KrcError(Problem(f"{obj.ref} has no '{step}' in {where}",
                                   help=f"did you mean '{close[0]}'?" if close else
                                   f"fields there: {', '.join(known) or 'none'}"))
        value = value[step]
    positions = object_positions(obj.document, render.environment.location_of,
                                 render.environment.written_at) or {}
    location = fieldpath.nearest_location(positions, segments)
    return Explanation(render.environment.name, f"{obj.ref}:{fieldpath.render(segments)}", value, "rendered",
                       (location,) if location else (), obj.template)
