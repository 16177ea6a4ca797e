"""A group that asks for GPUs can land on a GPU node: it tolerates the GPU taint or selects GPU nodes.

GPU node pools are usually tainted `nvidia.com/gpu`; without a matching toleration (or a node selector or
affinity that picks GPU nodes, where the platform adds the toleration) the Pods stay Pending.

The check reads only the manifest, so it runs on paths and environments alike. Its severity is info because
whether the Pods really stay Pending depends on the cluster, which neither mode knows: GKE and clusters with
the ExtendedResourceToleration admission plugin add the toleration themselves, and untainted GPU nodes need
none (the upstream GPU samples rely on that). Environments render the GPU toleration for every `gpu:` group
already; a production environment that wants a louder finding raises it with `lint.rules`.

Fails:

    template:
      spec:
        containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]

Passes:

    template:
      spec:
        tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
        containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]
"""
from __future__ import annotations

import json
from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import GroupView, cluster_groups
from .support.ray_resources import NVIDIA_GPU, gpu_limit

ABOUT = About("resources/gpu-scheduling", "info", "GPU groups tolerate the GPU taint or select GPU nodes")


def _reaches_gpu_nodes(group: GroupView) -> bool:
    spec = group.template_spec
    for toleration in spec.get("tolerations") or []:
        if isinstance(toleration, dict) and (toleration.get("key") == NVIDIA_GPU or (
                not toleration.get("key") and toleration.get("operator") == "Exists")):
            return True
    selectors = json.dumps([spec.get("nodeSelector") or {}, spec.get("affinity") or {}]).lower()
    return "gpu" in selectors or "accelerator" in selectors


def check(context: LintContext) -> Iterator[Problem]:
    for cluster, group in cluster_groups(context):
        if gpu_limit(group) > 0 and not _reaches_gpu_nodes(group):
            yield cluster.obj.problem(f"{group.name} group requests nvidia.com/gpu but neither tolerates the "
                                      "nvidia.com/gpu taint nor selects GPU nodes, so on tainted GPU nodes "
                                      "without automatic tolerations its Pods stay Pending; add the toleration "
                                      "or a GPU node selector", group.path + ("template", "spec"))
