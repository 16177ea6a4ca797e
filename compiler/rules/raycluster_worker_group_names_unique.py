"""Worker group names are unique within a cluster.

Only the optional validating webhook checks this upstream (the Helm chart installs none); the controller
would otherwise mix the Pods of same-named groups.

Fails:

    workerGroupSpecs:
    - groupName: cpu
    - groupName: cpu

Passes:

    workerGroupSpecs:
    - groupName: cpu
    - groupName: cpu-large
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_views

ABOUT = About("raycluster/worker-group-names-unique", "error", "worker group names are unique within a cluster")


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        seen: set[str] = set()
        for group in cluster.workers:
            if group.name in seen:
                yield cluster.obj.problem(f"worker group name '{group.name}' is used more than once; give each "
                                          "worker group its own groupName", group.path + ("groupName",))
            seen.add(group.name)
