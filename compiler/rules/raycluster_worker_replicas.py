"""Worker group replica bounds are non-negative and minReplicas <= maxReplicas.

Fails:

    workerGroupSpecs:
    - groupName: cpu
      minReplicas: 5
      maxReplicas: 3

Passes:

    workerGroupSpecs:
    - groupName: cpu
      minReplicas: 1
      maxReplicas: 3
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_groups

ABOUT = About("raycluster/worker-replicas", "error",
              "worker minReplicas and maxReplicas are non-negative and ordered", versions=">=1.6")


def check(context: LintContext) -> Iterator[Problem]:
    for cluster, group in cluster_groups(context, workers_only=True):
        low, high = group.replica_bounds
        if low is None or high is None:
            continue
        if low < 0:
            yield cluster.obj.problem(f"worker group '{group.name}' has minReplicas {low}; use 0 or more",
                                      group.path + ("minReplicas",))
        if high < 0:
            yield cluster.obj.problem(f"worker group '{group.name}' has maxReplicas {high}; use 0 or more",
                                      group.path + ("maxReplicas",))
        if low > high:
            yield cluster.obj.problem(f"worker group '{group.name}' has minReplicas {low} greater than "
                                      f"maxReplicas {high}; raise maxReplicas or lower minReplicas",
                                      group.path + ("minReplicas",))
