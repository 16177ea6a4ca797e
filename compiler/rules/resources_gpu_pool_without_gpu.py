"""In production, a group placed on GPU nodes asks Kubernetes for GPUs.

A group whose node selector, affinity or tolerations pick the GPU node pool (a `gpu` or accelerator label, the
`nvidia.com/gpu` taint) but whose containers request no `nvidia.com/gpu` gets a GPU node and no GPU: the device
plugin exposes none to the container, Ray counts 0 GPUs, and GPU work never runs on it (while the node's
GPUs are paid for). In production this is an error: the group cannot run what it was placed there for.
`gpu: 1` written one level too deep, under `nodeSelector`, ends here too (and in
`resources/resource-key-in-node-selector`).

Fails (production):

    workerGroups:
      - name: gpu
        nodeSelector: {karpenter.sh/nodepool: gpu}

Passes (production):

    workerGroups:
      - name: gpu
        gpu: 1
        nodeSelector: {karpenter.sh/nodepool: gpu}
"""
from __future__ import annotations

import json
from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import GroupView, cluster_groups
from .support.ray_resources import NVIDIA_GPU, is_gpu_key, quantity_number

ABOUT = About("resources/gpu-pool-without-gpu", "error",
              "in production, a group on the GPU node pool requests GPUs", environment_only=True)


def _picks_gpu_nodes(group: GroupView) -> bool:
    spec = group.template_spec
    for toleration in spec.get("tolerations") or []:
        if isinstance(toleration, dict) and toleration.get("key") == NVIDIA_GPU:
            return True
    placement = json.dumps([spec.get("nodeSelector") or {}, spec.get("affinity") or {}]).lower()
    return "gpu" in placement or "accelerator" in placement


def _requests_gpu(group: GroupView) -> bool:
    for container in group.containers:
        resources = container.get("resources")
        for kind in ("limits", "requests"):
            amounts = resources.get(kind) if isinstance(resources, dict) else None
            for key, value in (amounts or {}).items() if isinstance(amounts, dict) else ():
                if is_gpu_key(str(key)) and (quantity_number(value) or 0) > 0:
                    return True
    return False


def check(context: LintContext) -> Iterator[Problem]:
    if not context.production:
        return
    for cluster, group in cluster_groups(context):
        if _picks_gpu_nodes(group) and not _requests_gpu(group):
            yield cluster.obj.problem(
                f"{group.name} group is placed on GPU nodes but requests no GPU, so its Pods see no GPU; set "
                "the group's gpu: count (gpu: 1, at the level of cpu: and memory:), or place the group on CPU "
                "nodes",
                group.path + ("template", "spec", "nodeSelector")
                if group.template_spec.get("nodeSelector") else group.path)
