"""In production, a cluster with worker groups keeps Ray tasks off its head (`num-cpus: "0"`).

Work on the head competes with the GCS and the dashboard; an overloaded head takes the whole cluster down.

Fails (production environment):

    headGroupSpec:
      rayStartParams: {}
    workerGroupSpecs: [{groupName: cpu}]

Passes:

    headGroupSpec:
      rayStartParams: {num-cpus: "0"}
    workerGroupSpecs: [{groupName: cpu}]
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_views
from .support.ray_resources import ray_resources

ABOUT = About("resources/head-accepts-work", "warning",
              "in production, the head of a cluster with workers advertises no CPUs to Ray", environment_only=True)


def check(context: LintContext) -> Iterator[Problem]:
    if not context.production:
        return
    for cluster in cluster_views(context):
        if not cluster.workers:
            continue
        cpu = ray_resources(cluster.head).cpu
        if cpu != 0:
            yield cluster.obj.problem("the head accepts Ray tasks in a production environment; set the head's "
                                      "rayStartParams num-cpus: \"0\" so work runs on the workers",
                                      cluster.head.path + ("rayStartParams",))
