"""Every autoscaled worker group has a maximum Ray's autoscaler can reach.

Without `maxReplicas` the CRD stores 2147483647, and the autoscaler's config generator hands that to the
autoscaler as the node type's `max_workers` (times `numOfHosts`): the group scales with demand until the
Kubernetes cluster or its quota runs out. Capacity reviews count `replicas` instead, so they understate it.

Fails:

    enableInTreeAutoscaling: true
    workerGroupSpecs:
    - groupName: cpu
      replicas: 1

Passes:

    enableInTreeAutoscaling: true
    workerGroupSpecs:
    - groupName: cpu
      replicas: 1
      maxReplicas: 8
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.autoscaler_clusters import scaled_groups
from .support.context import LintContext

ABOUT = About("autoscaler/unbounded-workers", "warning",
              "an autoscaled worker group has a maxReplicas below the CRD default 2147483647",
              reads_autoscaler_view=True)
MAX_INT32 = 2147483647  # the CRD's default maxReplicas


def check(context: LintContext) -> Iterator[Problem]:
    for scaled, node, group in scaled_groups(context):
        if node.max_workers < MAX_INT32:
            continue
        yield scaled.view.obj.problem(
            f"worker group '{node.name}' has maxReplicas {group.spec.get('maxReplicas', MAX_INT32)} (the CRD "
            f"default when unset), so Ray {scaled.config.ray_version}'s autoscaler may add up to "
            f"{node.max_workers} workers; set maxReplicas to the most the group may use",
            group.path + ("maxReplicas",))
