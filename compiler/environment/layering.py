"""Merging environment layers while remembering which file:line set every value.

Rules (documented in README.md):
- maps merge deeply;
- lists of named items (every item a map with a `name`, or a `groupName` as KubeRay's worker groups have) merge
  item by item, matched by name; new names are appended;
- any other list, and any scalar, is replaced by the later layer;
- `null` in a later layer removes the key. Below `raw` and `operator.values` a null is kept, so that it
  removes the key from what krc generates (or tells Helm to drop a chart default).
Paths use item names for named lists, so `clusters[ray-cpu-demo].workerGroups[cpu].maxReplicas` is stable when
items are reordered (`shown_path` writes that notation, the one every message uses).
"""
from __future__ import annotations

import json
from typing import Any

from ..diagnostics.fieldpath import is_named_list, item_name
from ..diagnostics.problems import Location, Problem
from ..documents.yamlio import Path, Positions

# named path -> the chain of places that set it, earliest first
Origins = dict[Path, tuple[Location, ...]]


def named_positions(data: Any, positions: Positions) -> Positions:
    """Re-key raw positions (list indexes) by item name wherever a list is a named list."""
    out: Positions = {}

    def walk(value: Any, raw: Path, named: Path) -> None:
        if raw in positions:
            out[named] = positions[raw]
        if isinstance(value, dict):
            for key, child in value.items():
                walk(child, raw + (key,), named + (key,))
        elif isinstance(value, list):
            by_name = is_named_list(value)
            for i, child in enumerate(value):
                walk(child, raw + (i,), named + ((item_name(child),) if by_name else (i,)))

    walk(data, (), ())
    return out


def duplicate_names(data: Any, positions: Positions, fallback: Location) -> list[Problem]:
    """Two items of one named list with the same name would silently become one when layers merge."""
    problems: list[Problem] = []

    def walk(value: Any, raw: Path) -> None:
        if isinstance(value, dict):
            for key, child in value.items():
                walk(child, raw + (key,))
        elif isinstance(value, list):
            seen: set[str | None] = set()
            for i, child in enumerate(value):
                if is_named_list(value):
                    if item_name(child) in seen:
                        where = shown_path(data, raw)
                        problems.append(Problem(f"{where} names '{child['name']}' twice; names in a list must be "
                                                "unique (layers merge items by name): rename or remove one",
                                                positions.get(raw + (i, "name"), fallback),
                                                segments=named_path(data, raw)))
                    seen.add(item_name(child))
                walk(child, raw + (i,))

    walk(data, ())
    return problems


def named_path(data: Any, raw: Path) -> Path:
    """Translate a raw path (with list indexes) into the named path used by provenance."""
    out: list[Any] = []
    value = data
    for step in raw:
        if isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value):
            out.append(item_name(value[step]) if is_named_list(value) else step)
            value = value[step]
        elif isinstance(value, dict) and step in value:
            out.append(step)
            value = value[step]
        else:
            out.append(step)
            value = None
    return tuple(out)


def _needs_quotes(text: str) -> bool:
    """A quote, backslash, bracket or control character: shown quoted (as JSON), a path stays on one line and
    reads back unambiguously."""
    return not text.isprintable() or any(c in text for c in '[]"\\')


def _shown_name(text: str) -> str:
    return json.dumps(text, ensure_ascii=False) if _needs_quotes(text) else text


def shown_path(data: Any, path: Path) -> str:
    """A path in the environment file's own notation: list items by name in brackets, map keys after dots:
    `clusters[ray-cpu-demo].workerGroups[cpu].memory`. Takes raw (index) or named paths alike."""
    out = ""
    value = data
    for step in path:
        if isinstance(value, list):
            if isinstance(step, int) and 0 <= step < len(value):
                value = value[step]
                name = item_name(value)
                out += f"[{_shown_name(name)}]" if name is not None else f"[{step}]"
            else:
                value = next((item for item in value if item_name(item) == step), None)
                out += f"[{_shown_name(str(step))}]"
        else:
            key = str(step)
            quoted = _needs_quotes(key) or any(c in key for c in "./ ")
            out += (f"[{json.dumps(key, ensure_ascii=False)}]" if quoted else (f".{key}" if out else key))
            value = value.get(step) if isinstance(value, dict) else None
    return out or "(top level)"


def keeps_null(path: Path) -> bool:
    """Escape hatches keep nulls: there they remove a generated key, not just an inherited one."""
    return "raw" in path or path[:2] == ("operator", "values")


def without_nulls(value: Any, path: Path = ()) -> Any:
    """A layer as it reads once its nulls have removed their keys (what schema validation should see)."""
    if isinstance(value, dict):
        return {k: without_nulls(v, path + (k,)) for k, v in value.items()
                if v is not None or keeps_null(path + (k,))}
    if isinstance(value, list):
        return [without_nulls(v, path + (i,)) for i, v in enumerate(value)]
    return value


class _Merger:
    def __init__(self, origins: Origins, positions: Positions, fallback: Location, null_for_absent: bool = False):
        self.origins = origins
        self.positions = positions
        self.fallback = fallback
        # Helm values: a null for a key krc did not generate stays, so Helm drops the chart's default there
        self.null_for_absent = null_for_absent

    def _where(self, path: Path) -> Location:
        return self.positions.get(path, self.fallback)

    def _forget(self, prefix: Path) -> None:
        n = len(prefix)
        for key in [k for k in self.origins if k[:n] == prefix]:
            del self.origins[key]

    def _record(self, path: Path) -> None:
        self.origins[path] = self.origins.get(path, ()) + (self._where(path),)

    def fresh(self, value: Any, path: Path) -> Any:
        """A value this layer introduces: it alone is its origin; nulls inside it mean 'absent'."""
        self._record(path)
        if isinstance(value, dict):
            return {k: self.fresh(v, path + (k,)) for k, v in value.items()
                    if v is not None or keeps_null(path + (k,))}
        if isinstance(value, list):
            named = is_named_list(value)
            return [self.fresh(v, path + ((item_name(v),) if named else (i,))) for i, v in enumerate(value)]
        return value

    def overlay(self, base: Any, over: Any, path: Path) -> Any:
        if isinstance(base, dict) and isinstance(over, dict):
            result = dict(base)
            for key, value in over.items():
                child = path + (key,)
                if value is None and keeps_null(child):
                    result[key] = None  # removes the generated key when the escape hatch is applied
                    self._forget(child)
                    self._record(child)
                elif value is None and key not in base and self.null_for_absent:
                    result[key] = None
                elif value is None:
                    result.pop(key, None)
                    self._forget(child)
                elif key in base:
                    result[key] = self.overlay(base[key], value, child)
                else:
                    result[key] = self.fresh(value, child)
            self._record(path)
            return result
        if is_named_list(base) and is_named_list(over):
            merged = {item_name(item): item for item in base}
            for item in over:
                name = item_name(item)
                child = path + (name,)
                if name in merged:
                    merged[name] = self.overlay(merged[name], item, child)
                else:
                    merged[name] = self.fresh(item, child)
            self._record(path)
            return list(merged.values())
        chain = self.origins.get(path, ())
        self._forget(path)
        result = self.fresh(over, path)
        self.origins[path] = chain + self.origins[path]
        return result


def merge_layers(layers: list[tuple[Any, Positions, Location]]) -> tuple[dict[str, Any], Origins]:
    """Fold layers (data, named positions, file location), the base first, into one value with origins."""
    origins: Origins = {}
    result: Any = {}
    for data, positions, where in layers:
        result = _Merger(origins, positions, where).overlay(result, data, ())
    return result, origins


def merge_values(base: Any, over: Any, null_for_absent: bool = False) -> Any:
    """The same rules without provenance, for Helm values; with `null_for_absent`, a null for a key `base` lacks
    is kept (in Helm values it drops the chart's default)."""
    return _Merger({}, {}, Location(""), null_for_absent).overlay(base, over, ())
