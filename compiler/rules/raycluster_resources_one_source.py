"""A group declares its Ray resources in one place: the `resources` map or `rayStartParams`, not both.

The group's `resources` map overwrites `num-cpus`, `num-gpus`, `memory` and `resources` in `rayStartParams`,
so the operator rejects a group that sets both.

Fails:

    workerGroupSpecs:
    - groupName: gpu
      resources: {GPU: "1"}
      rayStartParams: {num-gpus: "1"}

Passes:

    workerGroupSpecs:
    - groupName: gpu
      resources: {GPU: "1"}
      rayStartParams: {}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_groups

ABOUT = About("raycluster/resources-one-source", "error",
              "group resources are set in the resources map or rayStartParams, never both", versions=">=1.5")

RESOURCE_PARAMS = ("num-cpus", "num-gpus", "memory", "resources")


def check(context: LintContext) -> Iterator[Problem]:
    for cluster, group in cluster_groups(context):
        resources = group.spec.get("resources")
        params = [k for k in RESOURCE_PARAMS if str(group.ray_start_params.get(k, "") or "") != ""]
        if isinstance(resources, dict) and resources and params:
            yield cluster.obj.problem(
                f"{group.name} group sets Ray resources both in 'resources' and in rayStartParams "
                f"({', '.join(params)}); keep only one of the two", group.path + ("resources",))
