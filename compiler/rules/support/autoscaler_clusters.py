"""Rules from the autoscaler's view: each cluster spec beside the generator's answer for it, and the environment
item it was rendered from (for findings about what the environment file asked for)."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ...documents.yamlio import Path
from .autoscaler_view import GeneratedConfig, NodeType
from .context import LintContext
from .ray_objects import ClusterView, GroupView, cluster_views

SOURCE_ANNOTATION = "krc.dev/source"  # the environment item an object came from (render.SOURCE_ANNOTATION)
# where an environment item keeps the cluster that becomes each spec
_CLUSTER_IN_ITEM: dict[tuple[str, ...], tuple[str, ...]] = {
    ("spec",): (), ("spec", "rayClusterConfig"): ("cluster",), ("spec", "rayClusterSpec"): ("cluster",),
    ("spec", "jobTemplate", "rayClusterSpec"): ("job", "cluster"),
}


@dataclass(frozen=True)
class ScaledCluster:
    view: ClusterView
    config: GeneratedConfig

    def worker(self, node: NodeType) -> GroupView | None:
        return next((g for g in self.view.workers if g.name == node.name), None)


def scaled_clusters(context: LintContext) -> Iterator[ScaledCluster]:
    """Every autoscaled cluster spec with the generator's answer for it (`krc lint` asks it about no other)."""
    if context.autoscaler is None:
        return
    for cluster in cluster_views(context):
        if not cluster.autoscaling:
            continue
        config = context.autoscaler.config_for(cluster.obj.document, tuple(str(s) for s in cluster.path))
        if config is not None:
            yield ScaledCluster(cluster, config)


def unscaled_clusters(context: LintContext) -> Iterator[ClusterView]:
    """Every cluster spec no autoscaler reads, once Ray's view was taken (as with scaled_clusters, nothing without
    it: the compile's pass has none, and a view whose generator is missing says nothing). What is said of these
    needs nothing of the generator, which `krc lint` does not ask about them."""
    view = context.autoscaler
    if view is not None and not view.unavailable:
        yield from (cluster for cluster in cluster_views(context) if not cluster.autoscaling)


def scaled_groups(context: LintContext, with_head: bool = False) -> Iterator[tuple[ScaledCluster, NodeType, GroupView]]:
    """Every node type of an autoscaled cluster's generated config (the workers', and the head's too when asked)
    with the group of the spec it stands for; a node type no group of the spec names is passed over."""
    for scaled in scaled_clusters(context):
        for node in scaled.config.node_types if with_head else scaled.config.workers:
            group = scaled.view.head if node.is_head else scaled.worker(node)
            if group is not None:
                yield scaled, node, group


def _named(data: Any, step: str) -> Any:
    if isinstance(data, dict):
        return data.get(step)
    if isinstance(data, list):  # lists of named items, as environment files write them
        return next((item for item in data if isinstance(item, dict) and item.get("name") == step), None)
    return None


def environment_cluster(context: LintContext, cluster: ClusterView) -> tuple[Path, dict[str, Any]] | None:
    """(path in the environment, the cluster as the environment file writes it) of a rendered spec, when the
    object names its environment item; None in paths mode or for objects not rendered from one."""
    if context.mode != "environment":
        return None
    source = (cluster.obj.metadata.get("annotations") or {}).get(SOURCE_ANNOTATION)
    inside = _CLUSTER_IN_ITEM.get(tuple(str(s) for s in cluster.path))
    if not isinstance(source, str) or inside is None:
        return None
    path: tuple[str, ...] = (*source.split("."), *inside)
    node: Any = context.environment
    for step in path:
        node = _named(node, step)
    return (path, node) if isinstance(node, dict) else None
