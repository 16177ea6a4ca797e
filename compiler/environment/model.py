"""Loading one environment: follow `extends`, validate each layer, merge with provenance."""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import fieldpath
from ..diagnostics.problems import KrcError, Location, Problem
from ..documents import yamlio
from ..documents.yamlio import Path
from ..project.paths import Project, decode_text, layer_name_error
from ..settings import limits
from . import layering, schema


@dataclass(frozen=True)
class Environment:
    name: str
    files: tuple[str, ...]  # the layer chain, base first, relative to the project root
    data: dict[str, Any]
    origins: layering.Origins = field(repr=False, compare=False)

    def chain_of(self, path: Path) -> tuple[Location, ...]:
        """Every place that set the value at `path` (a named path), earliest first."""
        return self.origins.get(tuple(path), ())

    def written_at(self, path: Path) -> Location | None:
        """Where the value at exactly `path` was last set; None when no layer wrote it."""
        chain = self.origins.get(tuple(path))
        return chain[-1] if chain else None

    def location_of(self, path: Path) -> Location | None:
        """Where the value at `path`, or its nearest parent, was last set."""
        return fieldpath.nearest(lambda prefix: (self.origins.get(prefix) or (None,))[-1], tuple(path))

    def get(self, path: Path, default: Any = None) -> Any:
        value: Any = self.data
        for step in path:
            if isinstance(value, dict):
                value = value.get(step, default)
            elif isinstance(value, list) and fieldpath.is_named_list(value):
                value = next((item for item in value if fieldpath.item_name(item) == step), default)
            elif isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value):
                value = value[step]
            else:
                return default
        return value

    def resolve_dotted(self, dotted: str) -> Path:
        """'clusters.ray-cpu-demo.workerGroups.cpu' -> a named path; segments may contain dots."""
        parts = dotted.split(".") if dotted else []
        path: list[Any] = []
        value: Any = self.data
        i = 0
        while i < len(parts):
            for j in range(len(parts), i, -1):  # the longest key that matches wins: names may contain dots
                segment = ".".join(parts[i:j])
                found, value2, step = _step(value, segment)
                if found:
                    path.append(step)
                    value, i = value2, j
                    break
            else:
                raise KrcError(f"'{dotted}' has no '{parts[i]}' after '{'.'.join(map(str, path)) or '(top)'}' in "
                               f"environment {self.name}; keys there: {', '.join(_keys(value)) or 'none'}")
        return tuple(path)


def _step(value: Any, segment: str) -> tuple[bool, Any, Any]:
    if isinstance(value, dict) and segment in value:
        return True, value[segment], segment
    if isinstance(value, list):
        if fieldpath.is_named_list(value):
            for item in value:
                if fieldpath.item_name(item) == segment:
                    return True, item, segment
        if segment.isdigit() and int(segment) < len(value):
            item = value[int(segment)]
            # provenance keys named lists by name, so an index is translated to the item's name
            return True, item, fieldpath.item_name(item) if fieldpath.is_named_list(value) else int(segment)
    return False, None, None


def _keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [str(k) for k in value]
    if fieldpath.is_named_list(value):
        return [str(fieldpath.item_name(item)) for item in value]
    return []


def _layer_text(project: Project, name: str, asked_at: Location | None) -> tuple[str, str]:
    error = layer_name_error(name)
    if error:  # `extends: ../../etc/passwd`: a layer is named, never a path
        raise KrcError(f"'extends' names a layer, not a path: {error}", asked_at)
    path = project.environment_file(name)
    if not path.exists() and not path.is_symlink():
        shown = project.relative(path)
        known = project.layer_names()
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
        fix = f"did you mean extends: {close[0]}?" if close else f"extend one of: {', '.join(known)}"
        if asked_at is None:
            fix = f"did you mean '{close[0]}'?" if close else f"choose one of: {', '.join(known)}"
        raise KrcError(Problem(f"environment file {shown} does not exist", asked_at, help=fix))
    data, shown = project.read_file_shown(path, limits.ENVIRONMENT_FILE_BYTES)
    return decode_text(data, shown), shown


def _layers(project: Project, name: str, positions_wanted: bool = True,
            keep: frozenset[str] | None = None) -> list[tuple[Any, yamlio.Positions, str]]:
    """`name` and every layer it extends, the base first: (data, positions, file as shown). Without
    `positions_wanted` the files are read by the faster loader and positions are empty (errors name the file);
    `keep` then names the only top-level settings wanted (`extends` is always read)."""
    layers: list[tuple[Any, yamlio.Positions, str]] = []
    seen: list[str] = []
    current: str | None = name
    asked_at: Location | None = None
    while current is not None:
        if current in seen:
            cycle = " -> ".join(seen + [current])
            raise KrcError(f"'extends' forms a cycle: {cycle}; remove one of the links", asked_at)
        seen.append(current)
        text, shown = _layer_text(project, current, asked_at)
        if positions_wanted:
            data, positions = yamlio.load_with_positions(text, shown)
        else:
            data, positions = yamlio.load(text, shown, keep and keep | {"extends"}), {}
        data = data if data is not None else {}
        layers.append((data, positions, shown))
        if not isinstance(data, dict):
            raise KrcError("an environment file is a YAML map of settings (clusters:, operator:, ...); "
                           "this one is not", positions.get((), Location(shown, 1, 1)))
        parent = data.get("extends")
        if parent is not None and not isinstance(parent, str):
            raise KrcError("'extends' takes the name of one environment file, e.g. extends: base",
                           positions.get(("extends",), Location(shown)))
        current, asked_at = parent, positions.get(("extends",), Location(shown))
    layers.reverse()
    return layers


def merged_settings(project: Project, name: str, keep: frozenset[str] | None = None) \
        -> tuple[dict[str, Any], tuple[str, ...]]:
    """The merged settings of `name` and its layers' files (the base first), without positions or schema checks:
    for reading a few settings of every environment at once (where each deploys), at a third of the cost of
    load_environment. Whatever it lets through, load_environment refuses when the environment is compiled.
    `keep`: only these top-level settings (layers merge each on its own: the rest would not change them)."""
    layers = _layers(project, name, positions_wanted=False, keep=keep)
    merged: Any = {}
    for data, _, _ in layers:
        merged = layering.merge_values(merged, {k: v for k, v in data.items() if k != "extends"})
    return merged if isinstance(merged, dict) else {}, tuple(shown for _, _, shown in layers)


def load_environment(project: Project, name: str) -> Environment:
    """The resolved environment `name`; raises KrcError with every schema problem of every layer."""
    layers = _layers(project, name)

    problems: list[Problem] = []
    for data, positions, shown in layers:
        # null removes a key: the schema judges the layer as it reads without them
        problems.extend(schema.validate_layer(layering.without_nulls(data), positions, Location(shown, 1, 1)))
        problems.extend(layering.duplicate_names(data, positions, Location(shown, 1, 1)))
    if problems:
        raise KrcError(problems)

    merged, origins = layering.merge_layers([
        ({k: v for k, v in data.items() if k != "extends"}, layering.named_positions(data, positions),
         Location(shown, 1, 1))
        for data, positions, shown in layers])
    env = Environment(name, tuple(shown for _, _, shown in layers), merged, origins)
    problems = schema.check_merged(merged, env.location_of, Location(layers[-1][2], 1, 1))
    if problems:
        raise KrcError(problems)
    return env
