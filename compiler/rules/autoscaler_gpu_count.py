"""The GPUs Kubernetes gives an autoscaled group's Pod are the GPUs Ray's autoscaler counts for its node type.

The autoscaler's config generator takes a node type's GPUs from `resources.GPU`, else `num-gpus`, else the first
resource of the Ray container (the first container) whose name ends in `gpu`, limits before requests. It does not
see GPUs a MIG slice (`nvidia.com/mig-1g.10gb`) or another container asks for, so the autoscaler never scales
that group for GPU work Kubernetes could run. (`num-gpus` or the `resources` map disagreeing with the limit is
`resources/gpu-limit-mismatch`.)

Fails:

    enableInTreeAutoscaling: true
    workerGroupSpecs:
    - groupName: mig
      template: {spec: {containers: [{name: w, resources: {limits: {cpu: "4", nvidia.com/mig-1g.10gb: 1}}}]}}

Passes:

    enableInTreeAutoscaling: true
    workerGroupSpecs:
    - groupName: mig
      rayStartParams: {num-gpus: "1"}
      template: {spec: {containers: [{name: w, resources: {limits: {cpu: "4", nvidia.com/mig-1g.10gb: 1}}}]}}
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..diagnostics.problems import Problem
from .rule import About
from .support.autoscaler_clusters import scaled_groups
from .support.context import LintContext
from .support.ray_objects import GroupView
from .support.ray_resources import is_gpu_key, quantity_number

ABOUT = About("autoscaler/gpu-count", "warning",
              "a group's Kubernetes GPUs equal the GPU count in Ray's autoscaler config",
              reads_autoscaler_view=True)


def _pod_gpus(group: GroupView) -> tuple[int, list[str]]:
    """GPUs the Pod gets (every container, limits else requests) and the resource names that grant them."""
    total, names = 0.0, []
    for container in group.containers:
        resources: Any = container.get("resources") or {}
        merged = {**(resources.get("requests") or {}), **(resources.get("limits") or {})}
        for key, value in merged.items():
            amount = quantity_number(value) or 0.0
            if is_gpu_key(str(key)) and amount > 0:
                total += amount
                names.append(f"{key} {value} on {container.get('name') or 'a container'}")
    return int(total), names


def check(context: LintContext) -> Iterator[Problem]:
    for scaled, node, group in scaled_groups(context, with_head=True):
        own = group.spec.get("resources")
        if "num-gpus" in group.ray_start_params or (isinstance(own, dict) and "GPU" in own):
            continue  # an explicit count: resources/gpu-limit-mismatch compares it with the limit
        kubernetes, names = _pod_gpus(group)
        ray = node.amount("GPU")
        if kubernetes == ray:
            continue
        yield scaled.view.obj.problem(
            f"{'the head' if node.is_head else f'worker group {node.name!r}'} gets {kubernetes} GPU(s) from "
            f"Kubernetes ({', '.join(names) or 'none'}) but Ray {scaled.config.ray_version}'s autoscaler config "
            f"counts {ray}; set rayStartParams num-gpus to {kubernetes} so Ray and its autoscaler see them",
            group.container_path + ("resources",))
