"""One capacity, two views: what Ray's autoscaler believes each node type offers next to what Kubernetes grants.

Ray's view comes from the autoscaling-config generator's answer (`rules.support.autoscaler_view`): per node type
its logical resources (CPU, GPU, memory, custom) times `max_workers` (the head once). Kubernetes' view is
`capacity.py`: the Pod's requests and limits times the Pods at max scale. Where a node type's two figures differ,
the row says why, naming what the generator read (`rayStartParams num-cpus '0'`, the `resources` map, a
container limit rounded up) and what only Kubernetes counts (other containers, GPUs the generator does not read).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..k8s.objects import object_ref
from ..k8s.ray_cluster_specs import cluster_specs
from ..k8s.shapes import field, mapping, sequence
from ..rules.support.autoscaler_view import AutoscalerView, GeneratedConfig, NodeType
from .capacity import Capacity, format_cpu, format_memory, pod_capacity, quantity_or_zero

RESOURCES = ("CPU", "GPU", "memory")


@dataclass(frozen=True)
class RayCapacity:
    """Ray's logical resources at max scale."""

    cpus: int = 0
    gpus: int = 0
    memory_bytes: int = 0
    custom: tuple[tuple[str, int], ...] = ()  # sorted

    def __add__(self, other: RayCapacity) -> RayCapacity:
        custom = dict(self.custom)
        for name, amount in other.custom:
            custom[name] = custom.get(name, 0) + amount
        return RayCapacity(self.cpus + other.cpus, self.gpus + other.gpus, self.memory_bytes + other.memory_bytes,
                           tuple(sorted(custom.items())))

    @classmethod
    def of_node(cls, node: NodeType, count: int) -> RayCapacity:
        return cls(node.amount("CPU") * count, node.amount("GPU") * count, node.amount("memory") * count,
                   tuple(sorted((k, v * count) for k, v in node.custom.items())))

    def as_dict(self) -> dict[str, Any]:
        return {"cpu": self.cpus, "gpu": self.gpus, "memory": format_memory(self.memory_bytes),
                "memoryBytes": self.memory_bytes, "custom": dict(self.custom)}


@dataclass(frozen=True)
class NodeRow:
    """One node type of one cluster spec as both sides see it."""

    cluster: str  # Kind/namespace/name of the object, and where the spec sits when nested
    node_type: NodeType
    nodes: int  # at max scale, as the autoscaler counts them (1 for the head)
    pods: int  # at max scale, as capacity.py counts Pods
    pod: Capacity  # Kubernetes: one Pod's limits (else requests), every container
    reasons: tuple[str, ...]

    @property
    def ray(self) -> RayCapacity:
        return RayCapacity.of_node(self.node_type, self.nodes)

    @property
    def kubernetes(self) -> Capacity:
        return self.pod.times(self.pods)

    def as_dict(self) -> dict[str, Any]:
        return {"cluster": self.cluster, **self.node_type.as_dict(), "nodesAtMaxScale": self.nodes,
                "podsAtMaxScale": self.pods, "kubernetesPerPod": self.pod.as_dict(),
                "rayAtMaxScale": self.ray.as_dict(), "kubernetesAtMaxScale": self.kubernetes.as_dict(),
                "reasons": list(self.reasons)}


@dataclass(frozen=True)
class ClusterRows:
    cluster: str
    config: GeneratedConfig
    rows: tuple[NodeRow, ...]
    autoscaled: bool  # enableInTreeAutoscaling: without it no autoscaler reads the config


@dataclass(frozen=True)
class TwoViews:
    """An environment's capacity at max scale in both views, and why they differ; `unavailable` when the generator
    could not run (not installed), `failed` lists clusters the generator rejects (the autoscaler would too)."""

    ray_version: str
    ray: RayCapacity
    kubernetes: Capacity
    reasons: tuple[str, ...]
    failed: tuple[str, ...] = ()
    unavailable: str = ""
    ray_before: RayCapacity | None = None  # golden's, when the review has it

    def as_dict(self) -> dict[str, Any]:
        return {"rayVersion": self.ray_version, "ray": None if self.unavailable else self.ray.as_dict(),
                "rayBefore": self.ray_before.as_dict() if self.ray_before and not self.unavailable else None,
                "kubernetes": self.kubernetes.as_dict(), "reasons": list(self.reasons), "failed": list(self.failed),
                "unavailable": self.unavailable or None}

    def lines(self) -> list[str]:
        """The text report's lines (indented by the caller)."""
        if self.unavailable:
            return [f"Ray's view: not computed ({self.unavailable})"]
        before = self.ray_before or self.ray
        custom = "".join(f", {name} {_change(dict(before.custom).get(name, 0), amount)}"
                         for name, amount in self.ray.custom)
        summary = (f"Ray's view at max scale (autoscaler config of Ray {self.ray_version}): CPU "
                   f"{_change(before.cpus, self.ray.cpus)}, GPU {_change(before.gpus, self.ray.gpus)}, memory "
                   f"{_change(format_memory(before.memory_bytes), format_memory(self.ray.memory_bytes))}{custom}; "
                   f"Kubernetes' (after): CPU "
                   f"{format_cpu(self.kubernetes.cpu_millis)}, GPU {self.kubernetes.gpus}, memory "
                   f"{format_memory(self.kubernetes.memory_bytes)}")
        out = [summary]
        out += [f"  differs: {reason}" for reason in self.reasons]
        out += [f"  the generator rejects {failure}" for failure in self.failed]
        return out


def _change(before: object, after: object) -> str:
    return str(after) if before == after else f"{before} -> {after}"


def _ray_container(group: dict[str, Any]) -> dict[str, Any]:
    containers = sequence(field(group, "template", "spec").get("containers"))
    return mapping(containers[0]) if containers else {}


def _source(group: dict[str, Any], resource: str) -> str:
    """Where the generator took a node type's figure from, in its own order of precedence."""
    params, own = mapping(group.get("rayStartParams")), mapping(group.get("resources"))
    param = {"CPU": "num-cpus", "GPU": "num-gpus", "memory": "memory"}[resource]
    if resource in own:
        return f"the group's resources.{resource} ({own[resource]!r})"
    if param in params:
        return f"rayStartParams {param} {params[param]!r}"
    k8s = mapping(_ray_container(group).get("resources"))
    limits, requests = mapping(k8s.get("limits")), mapping(k8s.get("requests"))
    if resource == "GPU":
        for where, values in (("limit", limits), ("request", requests)):
            for key, value in values.items():
                if str(key).endswith("gpu") and quantity_or_zero(value) > 0:
                    return f"the Ray container's {key} {where} {value!r}"
        return "no GPU resource named '*gpu' on the Ray container"
    key = resource.lower()
    for where, values in (("limit", limits), ("request", requests)):
        if key in values:
            return f"the Ray container's {key} {where} {values[key]!r}, rounded up"
    return f"no {key} on the Ray container"


def _kube_amount(pod: Capacity, resource: str) -> int:
    """Kubernetes' figure in Ray's unit: CPUs and GPUs in thousandths, memory in bytes."""
    return {"CPU": pod.cpu_millis, "GPU": pod.gpus * 1000, "memory": pod.memory_bytes}[resource]


def _shown(resource: str, amount: int) -> str:
    """An amount in the unit of _kube_amount as people read it."""
    if resource == "memory":
        return format_memory(amount)
    return format_cpu(amount)


def _reasons(group: dict[str, Any], node: NodeType, pod: Capacity, nodes: int, pods: int) -> tuple[str, ...]:
    reasons = []
    ray_container = pod_capacity({"spec": {"containers": [_ray_container(group)]}})
    for resource in RESOURCES:
        ray = node.amount(resource) * (1 if resource == "memory" else 1000)
        kube = _kube_amount(pod, resource)
        if ray == kube:
            continue
        text = (f"{resource}: Ray {_shown(resource, ray)} from {_source(group, resource)}, "
                f"Kubernetes {_shown(resource, kube)} per Pod")
        extra = kube - _kube_amount(ray_container, resource)
        if extra > 0:
            text += f" (other containers add {_shown(resource, extra)})"
        reasons.append(text)
    if nodes != pods:
        reasons.append(f"count: the autoscaler allows {nodes} node(s) (maxReplicas x numOfHosts as stored, CRD "
                       f"defaults applied), Kubernetes' view counts {pods} Pod(s)")
    return tuple(reasons)


def _pods(group: dict[str, Any]) -> int:
    """Pods at max scale as capacity.py counts them (maxReplicas, else replicas, else 1, times numOfHosts)."""
    replicas = group.get("maxReplicas", group.get("replicas", 1))
    hosts = group.get("numOfHosts") or 1
    return (replicas if isinstance(replicas, int) else 0) * (hosts if isinstance(hosts, int) else 1)


def cluster_rows(documents: Iterable[dict[str, Any]], view: AutoscalerView) -> list[ClusterRows]:
    """Every cluster spec of the documents with the generator's answer for it, node type by node type."""
    out = []
    for document in documents:
        for path, spec in cluster_specs(document):
            config = view.config_for(document, path)
            if config is None:
                continue
            name = object_ref(document) + ("" if path == ("spec",) else f" {'.'.join(path)}")
            groups = {str(g.get("groupName")): g for g in spec.get("workerGroupSpecs") or [] if isinstance(g, dict)}
            rows = []
            for node in config.node_types:
                group = mapping(spec.get("headGroupSpec")) if node.is_head else groups.get(node.name, {})
                pod = pod_capacity(group.get("template"))
                nodes, pods = (1, 1) if node.is_head else (node.max_workers, _pods(group))
                rows.append(NodeRow(name, node, nodes, pods, pod, _reasons(group, node, pod, nodes, pods)))
            out.append(ClusterRows(name, config, tuple(rows), spec.get("enableInTreeAutoscaling") is True))
    return out


def two_views(documents: Iterable[dict[str, Any]], view: AutoscalerView,
              before: tuple[Iterable[dict[str, Any]], AutoscalerView] | None = None) -> TwoViews:
    """The environment's capacity in both views (Kubernetes' over the clusters the generator answered for), and
    Ray's view of `before` (golden's stored objects and the generator's answers for them) when given."""
    if view.unavailable:
        return TwoViews(view.ray_version, RayCapacity(), Capacity(), (), (), view.unavailable)
    ray_before = None
    if before is not None:
        ray_before = RayCapacity()
        for cluster in cluster_rows(*before):
            if not cluster.config.error:
                ray_before += ray_capacity(cluster.config)
    ray, kube, reasons, failed = RayCapacity(), Capacity(), [], []
    for cluster in cluster_rows(documents, view):
        if cluster.config.error:
            failed.append(f"{cluster.cluster}: {cluster.config.error}")
            continue
        for row in cluster.rows:
            ray += row.ray
            kube += row.kubernetes
            reasons += [f"{row.cluster} {row.node_type.name}: {reason}" for reason in row.reasons]
    return TwoViews(view.ray_version, ray, kube, tuple(reasons), tuple(failed), ray_before=ray_before)


def ray_capacity(config: GeneratedConfig) -> RayCapacity:
    """A cluster's Ray-view capacity at max scale straight from the generator's answer: head once, workers times
    max_workers."""
    total = RayCapacity()
    for node in config.node_types:
        total += RayCapacity.of_node(node, 1 if node.is_head else node.max_workers)
    return total
