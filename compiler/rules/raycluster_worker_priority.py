"""A worker group `priority` needs autoscaler v2 and Ray 2.56.0 or later.

Fails:

    rayVersion: "2.55.0"
    workerGroupSpecs:
    - groupName: cpu
      priority: 1

Passes:

    rayVersion: "2.56.0"
    enableInTreeAutoscaling: true
    autoscalerOptions: {version: v2}
    workerGroupSpecs:
    - groupName: cpu
      priority: 1
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_groups, int_or
from .support.versions import parse_version

ABOUT = About("raycluster/worker-priority", "error",
              "worker group priority needs autoscaler v2 and Ray >= 2.56.0", versions=">=1.7")

MINIMUM_RAY = (2, 56, 0)


def check(context: LintContext) -> Iterator[Problem]:
    for cluster, group in cluster_groups(context, workers_only=True):
        priority = int_or(group.spec.get("priority"), 0)
        if priority == 0:
            continue
        path = group.path + ("priority",)
        version = cluster.ray_version
        parsed = parse_version(version)
        if not version:
            yield cluster.obj.problem(f"worker group '{group.name}' sets priority but rayVersion is not set; "
                                      "set rayVersion to 2.56.0 or later", path)
        elif parsed is None:
            yield cluster.obj.problem(f"worker group '{group.name}' sets priority but rayVersion '{version}' is "
                                      "not a version; write it like 2.56.0", cluster.at("rayVersion"))
        elif parsed < MINIMUM_RAY:
            yield cluster.obj.problem(f"worker group '{group.name}' sets priority, which needs Ray 2.56.0 or "
                                      f"later, but rayVersion is {version}; upgrade Ray or remove priority", path)
        if not cluster.autoscaler_v2:
            yield cluster.obj.problem(f"worker group '{group.name}' sets priority {priority}, which only "
                                      "autoscaler v2 supports; set autoscalerOptions.version: v2", path)
