"""Where each field of a rendered object was written in the environment files.

Templates annotate every object with `krc.dev/source` (e.g. `clusters.ray-cpu-demo`). From there, the fields
krc generates map back to environment keys (`spec.workerGroupSpecs[1].maxReplicas` ->
`clusters.<name>.workerGroups.<group>.maxReplicas`), so findings point at the line a user edits. A field with
no counterpart falls back to its nearest mapped parent, and at worst to the environment item.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..diagnostics.problems import Location
from ..documents.yamlio import Path, PositionLookup, Positions, iter_paths
from .templates import SOURCE_ANNOTATION

Locate = Callable[[Path], "Location | None"]

# Pod-template fields of a group and the environment key that sets them.
_CONTAINER_FIELDS = {"image": ("image",), "env": ("env",)}
_RESOURCE_KEYS = {"cpu": ("cpu",), "memory": ("memory",), "nvidia.com/gpu": ("gpu",)}
# RayCluster spec keys -> environment keys of a cluster body
_CLUSTER_KEYS = {"enableInTreeAutoscaling": ("autoscaling", "enabled"), "autoscalerOptions": ("autoscaling",),
                 "headGroupSpec": ("head",), "rayVersion": ("rayVersion",)}
_JOB_KEYS = {"runtimeEnvYAML": ("runtimeEnv",), "rayClusterSpec": ("cluster",)}
_SERVICE_KEYS = {"serveConfigV2": ("serveConfig",), "rayClusterConfig": ("cluster",), "upgradeStrategy": ("upgrade",)}


def _group(doc_group: dict[str, Any], rest: Path) -> Path:
    """Path inside a head or worker group spec -> path inside the environment's group entry."""
    if not rest:
        return ()
    if rest[0] == "template" and rest[1:3] == ("spec", "containers") and len(rest) > 4:
        field = rest[4]
        if field == "resources" and len(rest) > 6:
            return _RESOURCE_KEYS.get(rest[6], ())
        return _CONTAINER_FIELDS.get(field, ())
    if (rest[0] == "template" and rest[1:2] == ("spec",) and len(rest) > 2
            and rest[2] in ("nodeSelector", "tolerations")):
        return (rest[2],) + tuple(rest[3:4])
    if rest[0] == "groupName":
        return ("name",)
    return (rest[0],) if isinstance(rest[0], str) else ()


def _cluster(spec: dict[str, Any], rest: Path) -> Path:
    if not rest:
        return ()
    key = rest[0]
    # set once per cluster and copied into the Pod template of the head and of every worker group
    pod_field = rest[2:5] if key == "workerGroupSpecs" else rest[1:4]
    if key in ("workerGroupSpecs", "headGroupSpec") and pod_field == ("template", "spec", "serviceAccountName"):
        return ("serviceAccountName",)
    if key == "workerGroupSpecs" and len(rest) > 1:
        groups = spec.get("workerGroupSpecs") or []
        if isinstance(rest[1], int) and rest[1] < len(groups):
            name = groups[rest[1]].get("groupName")
            return ("workerGroups", name) + _group(groups[rest[1]], rest[2:])
        return ("workerGroups",)
    if key == "headGroupSpec":
        return ("head",) + _group(spec.get("headGroupSpec") or {}, rest[1:])
    mapped = _CLUSTER_KEYS.get(key, (key,))
    return mapped + (tuple(rest[1:2]) if key == "autoscalerOptions" else ())


def environment_path(document: dict[str, Any], path: Path) -> Path:
    """The environment path (below the object's item) that produced `path` of the object, as far as known."""
    raw_spec = document.get("spec")
    spec: dict[str, Any] = raw_spec if isinstance(raw_spec, dict) else {}
    kind = document.get("kind")
    if path[:1] == ("metadata",):
        return tuple(path[1:3]) if path[1:2] in (("labels",), ("annotations",)) else ()
    if path[:1] != ("spec",):
        return ()
    rest = path[1:]
    if kind == "RayCluster":
        return _cluster(spec, rest)
    if kind == "RayService" and rest[:1] == ("rayClusterConfig",):
        return ("cluster",) + _cluster(spec.get("rayClusterConfig") or {}, rest[1:])
    if kind == "RayService" and rest[:2] == ("upgradeStrategy", "clusterUpgradeOptions"):
        return ("upgrade",) + tuple(rest[2:3])
    if kind == "RayService" and rest:
        return _SERVICE_KEYS.get(rest[0], (rest[0],))
    if kind == "RayCronJob" and rest[:1] == ("jobTemplate",):
        return ("job",) + _job(spec.get("jobTemplate") or {}, rest[1:])
    if kind == "RayJob":
        return _job(spec, rest)
    return tuple(rest[:1])


def _job(spec: dict[str, Any], rest: Path) -> Path:
    if not rest:
        return ()
    if rest[0] == "rayClusterSpec":
        return ("cluster",) + _cluster(spec.get("rayClusterSpec") or {}, rest[1:])
    return _JOB_KEYS.get(rest[0], (rest[0],))


def object_positions(document: dict[str, Any], locate: Locate, written: Locate | None = None) \
        -> PositionLookup | None:
    """A position for every field of an object rendered from an environment item; None if it names none.
    `written(path)` (exact, no parent fallback) lets a field set under a `raw:` escape hatch point at its own line.
    Worked out on first use: only a finding reads them, and most objects have none."""
    source = ((document.get("metadata") or {}).get("annotations") or {}).get(SOURCE_ANNOTATION)
    if not isinstance(source, str):
        return None
    return _LazyPositions(document, tuple(source.split(".")), locate, written)


class _LazyPositions(Mapping[Path, Location]):
    def __init__(self, document: dict[str, Any], item: Path, locate: Locate, written: Locate | None):
        self._arguments = (document, item, locate, written)

    @functools.cached_property
    def _positions(self) -> Positions:
        return _all_positions(*self._arguments)

    def __getitem__(self, path: Path) -> Location:
        return self._positions[path]

    def __iter__(self) -> Iterator[Path]:
        return iter(self._positions)

    def __len__(self) -> int:
        return len(self._positions)


def _all_positions(document: dict[str, Any], item: Path, locate: Locate, written: Locate | None) -> Positions:
    positions: Positions = {}
    item_location = locate(item)
    if item_location is not None:
        positions[()] = item_location
    for leaf, _ in iter_paths(document):
        for end in range(1, len(leaf) + 1):
            path = leaf[:end]
            if path in positions:
                continue
            under_raw = raw_path(document, path) if written is not None else None
            found = (written(item + under_raw) if written is not None and under_raw is not None else None) \
                or locate(item + environment_path(document, path))
            if found is not None:
                positions[path] = found
    return positions


def _named(data: object, rest: Path) -> Path:
    """Indexes into lists of named items (name, groupName) become the names, as `raw:` origins are keyed."""
    out: list[object] = []
    for step in rest:
        if isinstance(data, list) and isinstance(step, int) and 0 <= step < len(data):
            item = data[step]
            name = item.get("name", item.get("groupName")) if isinstance(item, dict) else None
            out.append(name if isinstance(name, str) else step)
            data = item
        else:
            out.append(step)
            data = data.get(step) if isinstance(data, dict) else None
    return tuple(out)


def _raw_in_cluster(spec: dict[str, Any], rest: Path) -> Path:
    if rest[:1] == ("workerGroupSpecs",) and len(rest) > 1 and isinstance(rest[1], int):
        groups = spec.get("workerGroupSpecs") or []
        if rest[1] < len(groups) and isinstance(groups[rest[1]], dict):
            group = groups[rest[1]]
            return ("workerGroups", group.get("groupName"), "raw") + _named(group, rest[2:])
    if rest[:1] == ("headGroupSpec",):
        return ("head", "raw") + _named(spec.get("headGroupSpec") or {}, rest[1:])
    return ("raw",) + _named(spec, rest)


def raw_path(document: dict[str, Any], path: Path) -> Path | None:
    """Where under a `raw:` escape hatch a field of the object would have been written (below the object's
    item), e.g. spec.workerGroupSpecs[0].template.spec.containers[0].imagePullPolicy ->
    workerGroups.cpu.raw.template.spec.containers.ray-worker.imagePullPolicy; None outside spec."""
    spec = document.get("spec")
    if path[:1] != ("spec",) or not isinstance(spec, dict):
        return None
    rest, kind = path[1:], document.get("kind")
    nested = {"RayJob": "rayClusterSpec", "RayService": "rayClusterConfig"}.get(str(kind))
    if kind == "RayCluster":
        return _raw_in_cluster(spec, rest)
    if nested and rest[:1] == (nested,) and isinstance(spec.get(nested), dict):
        return ("cluster",) + _raw_in_cluster(spec[nested], rest[1:])
    return ("raw",) + _named(spec, rest)
