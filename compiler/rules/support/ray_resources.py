"""Ray's logical CPU / GPU / memory per group, decided the way the operator builds `ray start`.

Precedence (kuberay-operator.md section 3): the group's `resources` map, then `rayStartParams`, then the Ray
container's limits (CPU falls back to the request). Quantities round up, as Quantity.Value() does.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ...k8s.quantities import parse_quantity as k8s_quantity
from .ray_objects import GroupView

_MIG = re.compile(r"nvidia\.com/mig-\d+g\.\d+gb$")
NVIDIA_GPU = "nvidia.com/gpu"


def quantity_number(value: Any) -> float | None:
    """A Kubernetes quantity ('500m', '2Gi', 4) as a number; None when it does not parse."""
    quantity = k8s_quantity(value)
    return None if quantity is None else float(quantity)


def is_gpu_key(key: str, case_sensitive: bool = True) -> bool:
    probe = key if case_sensitive else key.lower()
    return probe.endswith("gpu") or bool(_MIG.search(probe))


@dataclass(frozen=True)
class RayResources:
    cpu: float | None  # None: left to Ray's autodetection
    gpu: float | None
    gpu_source: str  # "resources", "rayStartParams", "limits" or ""
    memory: float | None


def _ceil(value: float | None) -> float | None:
    return None if value is None else float(math.ceil(value))


def container_limits(group: GroupView) -> dict[str, Any]:
    limits = (group.container.get("resources") or {}).get("limits")
    return limits if isinstance(limits, dict) else {}


def container_requests(group: GroupView) -> dict[str, Any]:
    requests = (group.container.get("resources") or {}).get("requests")
    return requests if isinstance(requests, dict) else {}


def gpu_limit(group: GroupView) -> float:
    """The nvidia.com/gpu the Ray container asks Kubernetes for (limit, else request)."""
    value = container_limits(group).get(NVIDIA_GPU, container_requests(group).get(NVIDIA_GPU))
    return quantity_number(value) or 0.0


def ray_resources(group: GroupView) -> RayResources:
    cpu = gpu = memory = None
    gpu_source = ""
    resources_map = group.spec.get("resources")
    params = group.ray_start_params
    if isinstance(resources_map, dict) and resources_map:
        for key, raw in resources_map.items():
            value = quantity_number(raw)
            if value is None:
                continue
            lower = str(key).lower()
            if lower == "cpu":
                cpu = _ceil(value)
            elif lower == "memory":
                memory = _ceil(value)
            elif is_gpu_key(lower):
                gpu, gpu_source = _ceil(value), "resources"
    if cpu is None and "num-cpus" in params:
        cpu = quantity_number(params["num-cpus"])
    if gpu is None and "num-gpus" in params:
        gpu, gpu_source = quantity_number(params["num-gpus"]), "rayStartParams"
    if memory is None and "memory" in params:
        memory = quantity_number(params["memory"])
    limits, requests = container_limits(group), container_requests(group)
    if cpu is None:
        value = quantity_number(limits.get("cpu")) or quantity_number(requests.get("cpu"))
        cpu = _ceil(value) if value else None
    if memory is None:
        value = quantity_number(limits.get("memory"))
        memory = _ceil(value) if value else None
    if gpu is None:
        for key in sorted(limits):
            value = quantity_number(limits[key])
            if is_gpu_key(str(key)) and value:
                gpu, gpu_source = _ceil(value), "limits"
                break
    return RayResources(cpu, gpu, gpu_source, memory)
