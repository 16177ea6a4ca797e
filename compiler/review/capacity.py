"""Capacity at maximum scale: what an environment's Ray clusters can ask the Kubernetes scheduler for.

Per worker group: maxReplicas (else replicas, else 1) x numOfHosts (else 1) Pods; plus one head Pod per cluster.
Per Pod: the sum over its containers of the limit, else the request (CPU, memory, and GPUs from any
`*/gpu` resource such as nvidia.com/gpu). Counted clusters: RayClusters, the cluster of each RayService
(`spec.rayClusterConfig`), of each RayJob (`spec.rayClusterSpec`) and of each RayCronJob's job template (one
run at a time). A RayService whose cluster KubeRay replaces by a new one needs it twice during the upgrade: that
is `upgrade_peak`, shown only for the changes that do replace it (label rayservice-new-cluster; not scale-only
changes nor worker groups appended at the end, which KubeRay applies to the running cluster: see
rayservice_action).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..k8s.quantities import parse_quantity as k8s_quantity
from ..k8s.ray_cluster_specs import cluster_specs
from ..k8s.shapes import field, sequence


def quantity_or_zero(value: Any) -> Decimal:
    """A resource quantity as a number; unreadable values count as 0 (the schema validation reports them)."""
    quantity = k8s_quantity(value)
    return Decimal(0) if quantity is None else quantity


@dataclass(frozen=True)
class Capacity:
    cpu_millis: int = 0
    gpus: int = 0
    memory_bytes: int = 0

    def __add__(self, other: Capacity) -> Capacity:
        return Capacity(self.cpu_millis + other.cpu_millis, self.gpus + other.gpus,
                        self.memory_bytes + other.memory_bytes)

    def times(self, count: int) -> Capacity:
        return Capacity(self.cpu_millis * count, self.gpus * count, self.memory_bytes * count)

    def as_dict(self) -> dict[str, Any]:
        return {"cpu": format_cpu(self.cpu_millis), "cpuMillis": self.cpu_millis, "gpu": self.gpus,
                "memory": format_memory(self.memory_bytes), "memoryBytes": self.memory_bytes}


def format_cpu(millis: int) -> str:
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def format_memory(size: int) -> str:
    for suffix, factor in (("Ti", 2 ** 40), ("Gi", 2 ** 30), ("Mi", 2 ** 20), ("Ki", 2 ** 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{suffix}"
    if size >= 2 ** 30:
        return f"{size / 2 ** 30:.1f}Gi"
    return str(size)


def _amount(limits: dict[str, Any], requests: dict[str, Any], name: str) -> Decimal:
    """The limit of a resource, else its request, else 0."""
    return quantity_or_zero(limits.get(name, requests.get(name, 0)))


def pod_capacity(template: Any) -> Capacity:
    total = Capacity()
    for container in sequence(field(template, "spec").get("containers")):
        resources = field(container, "resources")
        limits, requests = field(resources, "limits"), field(resources, "requests")
        gpus = sum((quantity_or_zero(v) for k, v in {**requests, **limits}.items() if str(k).endswith("/gpu")),
                   Decimal(0))
        total += Capacity(int(_amount(limits, requests, "cpu") * 1000), int(gpus),
                          int(_amount(limits, requests, "memory")))
    return total


def cluster_capacity(cluster_spec: Any) -> Capacity:
    """One RayCluster spec at maximum scale: the head plus every worker group at maxReplicas x numOfHosts."""
    if not isinstance(cluster_spec, dict):
        return Capacity()
    total = pod_capacity(field(cluster_spec, "headGroupSpec").get("template"))
    for group in sequence(cluster_spec.get("workerGroupSpecs")):
        if not isinstance(group, dict):
            continue
        replicas = group.get("maxReplicas", group.get("replicas", 1))
        hosts = group.get("numOfHosts") or 1
        count = (replicas if isinstance(replicas, int) else 0) * (hosts if isinstance(hosts, int) else 1)
        total += pod_capacity(group.get("template")).times(count)
    return total


def object_capacity(document: dict[str, Any]) -> Capacity:
    total = Capacity()
    for _, cluster in cluster_specs(document):
        total += cluster_capacity(cluster)
    return total


def environment_capacity(documents: Iterable[dict[str, Any]]) -> Capacity:
    total = Capacity()
    for document in documents:
        total += object_capacity(document)
    return total


def upgrade_peak(after: Capacity, replaced: Iterable[dict[str, Any]]) -> Capacity | None:
    """`after` plus the new clusters of the RayServices being replaced, or None when none is."""
    documents = list(replaced)
    if not documents:
        return None
    peak = after
    for document in documents:
        peak += object_capacity(document)
    return peak
