"""Ray takes a node's memory from the Ray container's memory limit only: a memory request alone is not Ray's.

The operator passes `--memory` to `ray start` from `limits.memory`; for CPU it falls back to the request, for
memory it does not. A Ray container with a memory request and no limit therefore starts Ray without `--memory`:
Ray sizes its heap and object store on the whole node's memory, not on the request the Pod was scheduled
with, and the node runs out of memory under load.

KubeRay source: `ray-operator/controllers/ray/common/pod.go`, `generateRayStartCommand` (`resource.Limits
[corev1.ResourceMemory]` only; `num-cpus` falls back to `resource.Requests[corev1.ResourceCPU]`), 1.5.2, 1.6.2,
1.7.0. Not reported when `rayStartParams.memory` or the group's `resources.memory` set Ray's memory.

Fails:

    workerGroupSpecs:
    - groupName: cpu
      template:
        spec:
          containers: [{name: w, resources: {requests: {memory: 8Gi}}}]

Passes:

    workerGroupSpecs:
    - groupName: cpu
      template:
        spec:
          containers: [{name: w, resources: {requests: {memory: 8Gi}, limits: {memory: 8Gi}}}]
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_groups
from .support.ray_resources import container_limits, container_requests

ABOUT = About("raycluster/memory-request-ignored", "warning",
              "a memory request without a limit is not Ray's memory (Ray reads limits.memory only)")


def check(context: LintContext) -> Iterator[Problem]:
    for cluster, group in cluster_groups(context):
        resources = group.spec.get("resources")
        if "memory" in group.ray_start_params or (
                isinstance(resources, dict) and any(str(k).lower() == "memory" for k in resources)):
            continue
        request = container_requests(group).get("memory")
        if request is not None and container_limits(group).get("memory") is None:
            yield cluster.obj.problem(
                f"{group.name} group requests memory {request} without a memory limit, so Ray is started "
                f"without --memory and sizes itself on the whole node; add limits.memory: {request} to the "
                "Ray container", group.container_path + ("resources", "requests", "memory"))
