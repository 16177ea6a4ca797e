"""Where KubeRay objects keep a RayCluster spec: a RayCluster's own spec, a RayService's `rayClusterConfig`, a
RayJob's `rayClusterSpec` and a RayCronJob's `jobTemplate.rayClusterSpec` (one run at a time)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

CLUSTER_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "RayCluster": ("spec",),
    "RayService": ("spec", "rayClusterConfig"),
    "RayJob": ("spec", "rayClusterSpec"),
    "RayCronJob": ("spec", "jobTemplate", "rayClusterSpec"),
}


def cluster_specs(document: Any) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    """(path, spec) of every RayCluster spec the object creates; nothing for other objects or absent specs."""
    if not isinstance(document, dict) or not str(document.get("apiVersion", "")).startswith("ray.io/"):
        return
    path = CLUSTER_SPEC_PATHS.get(str(document.get("kind")))
    if path is None:
        return
    node: Any = document
    for step in path:
        node = node.get(step) if isinstance(node, dict) else None
    if isinstance(node, dict):
        yield path, node


def autoscaled(spec: dict[str, Any]) -> bool:
    """Whether Ray's autoscaler reads this cluster: KubeRay runs it beside the head only with
    `enableInTreeAutoscaling: true`."""
    return spec.get("enableInTreeAutoscaling") is True
