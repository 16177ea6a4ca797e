"""How Ray's autoscaler reads maxReplicas of a multi-host group: in hosts, not replicas.

With `numOfHosts` above 1 a replica is a set of hosts (a TPU slice, a multi-node job) and the autoscaler's config
generator multiplies: the node type's `min_workers` and `max_workers` are `minReplicas` and `maxReplicas` times
`numOfHosts`. Ray's view at max scale is that many nodes, and the autoscaler adds them a whole replica at a time.

Fails (info):

    workerGroupSpecs:
    - {groupName: tpu, numOfHosts: 4, minReplicas: 0, maxReplicas: 2, ...}

Passes:

    workerGroupSpecs:
    - {groupName: tpu, numOfHosts: 1, minReplicas: 0, maxReplicas: 2, ...}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.autoscaler_clusters import scaled_groups
from .support.context import LintContext
from .support.ray_objects import int_or

ABOUT = About("autoscaler/hosts-per-replica", "info",
              "Ray's autoscaler counts a multi-host group's maxReplicas in hosts (times numOfHosts)",
              reads_autoscaler_view=True)


def check(context: LintContext) -> Iterator[Problem]:
    for scaled, node, group in scaled_groups(context):
        hosts = int_or(group.spec.get("numOfHosts"), 1)
        if hosts <= 1:
            continue
        yield scaled.view.obj.problem(
            f"worker group '{node.name}' has maxReplicas {group.spec.get('maxReplicas')} of {hosts} hosts each: "
            f"Ray {scaled.config.ray_version}'s autoscaler counts {node.min_workers} to {node.max_workers} "
            f"workers, added {hosts} at a time; size quotas for {node.max_workers} Pods",
            group.path + ("numOfHosts",))
