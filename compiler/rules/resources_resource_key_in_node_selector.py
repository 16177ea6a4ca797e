"""A resource amount (`gpu: '1'`, `memory: 8Gi`) under `nodeSelector` is a node label no node carries.

`nodeSelector` matches node labels. A key such as `gpu`, `cpu`, `memory` or `nvidia.com/gpu` with a number or
quantity as its value is almost always a resource indented one level too deep: the group gets no GPU (or CPU, or
memory) and its Pods wait for a node with that label, which no node has, so they stay Pending. It cannot run as
written, so this is an error.

Fails:

    workerGroups:
      - name: gpu
        nodeSelector:
          karpenter.sh/nodepool: gpu
          gpu: '1'

Passes:

    workerGroups:
      - name: gpu
        gpu: 1
        nodeSelector:
          karpenter.sh/nodepool: gpu
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from ..k8s.quantities import parse_quantity
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_groups

ABOUT = About("resources/resource-key-in-node-selector", "error",
              "a resource amount (gpu, cpu, memory, nvidia.com/gpu) is not a nodeSelector label")

NAMES = {"gpu": "nvidia.com/gpu"}
RESOURCE_KEYS = frozenset({"cpu", "memory", "gpu", "gpus", "nvidia.com/gpu", "amd.com/gpu", "ephemeral-storage"})


def check(context: LintContext) -> Iterator[Problem]:
    for cluster, group in cluster_groups(context):
        selector = group.template_spec.get("nodeSelector")
        if not isinstance(selector, dict):
            continue
        for key, value in sorted(selector.items()):
            if str(key).lower() in RESOURCE_KEYS and parse_quantity(value) is not None:
                own = "gpu" if "gpu" in str(key).lower() else str(key).lower()
                fix = (f"the group's own {own}: {value} (beside cpu: and memory:, unquoted)"
                       if context.mode == "environment" else
                       f"the Ray container's resources.limits ({NAMES.get(own, own)}: {value})")
                yield cluster.obj.problem(
                    f"{group.name} group's nodeSelector has {key}: {value!r}, a node label no node carries (so "
                    f"its Pods stay Pending) and no resource request; move it out of nodeSelector to {fix}",
                    group.path + ("template", "spec", "nodeSelector", key))
