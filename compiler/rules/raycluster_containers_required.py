"""Every group's pod template needs at least one container; the first one is the Ray container.

Fails:

    headGroupSpec:
      template:
        spec:
          containers: []

Passes:

    headGroupSpec:
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.52.0
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_groups

ABOUT = About("raycluster/containers-required", "error", "head and worker pod templates have at least one container")


def check(context: LintContext) -> Iterator[Problem]:
    for cluster, group in cluster_groups(context):
        if not group.containers:
            what = "headGroupSpec" if group.is_head else f"worker group '{group.name}'"
            yield cluster.obj.problem(f"{what} has no container; add the Ray container as the first entry of "
                                      "template.spec.containers", group.path + ("template", "spec"))
