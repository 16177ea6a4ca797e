"""Ray's GPU count for a group agrees with the GPUs its container gets from Kubernetes.

Ray takes a group's GPUs from the group's `resources` map, else `rayStartParams.num-gpus`, else the container's
`nvidia.com/gpu` limit. When the first two disagree with the limit, Ray schedules tasks on GPUs the Pod does
not have (or leaves requested GPUs idle).

Fails:

    workerGroupSpecs:
    - groupName: gpu
      rayStartParams: {num-gpus: "2"}
      template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]}}

Passes:

    workerGroupSpecs:
    - groupName: gpu
      rayStartParams: {num-gpus: "1"}
      template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]}}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_groups
from .support.ray_resources import container_limits, gpu_limit, is_gpu_key, ray_resources

ABOUT = About("resources/gpu-limit-mismatch", "warning",
              "Ray's GPU count for a group matches the container's nvidia.com/gpu limit")


def _count(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def check(context: LintContext) -> Iterator[Problem]:
    for cluster, group in cluster_groups(context):
        # first what is cheaper to ask: most groups (the head, CPU workers) have no GPU limit
        if not any(is_gpu_key(str(k)) for k in container_limits(group)):
            continue  # no GPU limit at all: logical-only GPUs (demos, fake resources) are Ray's business
        resources = ray_resources(group)
        if resources.gpu_source not in ("resources", "rayStartParams") or resources.gpu is None:
            continue
        physical = gpu_limit(group)
        # equal counts agree; 0 is a deliberate "keep Ray work off these GPUs"
        if not group.containers or resources.gpu == physical or resources.gpu == 0:
            continue
        source = "the resources map" if resources.gpu_source == "resources" else "rayStartParams num-gpus"
        path = group.path + (("resources",) if resources.gpu_source == "resources"
                             else ("rayStartParams", "num-gpus"))
        yield cluster.obj.problem(
            f"{group.name} group gives Ray {_count(resources.gpu)} GPU(s) through {source} but its container's "
            f"nvidia.com/gpu limit is {_count(physical)}; make the two numbers equal", path)
