"""A RayJob either creates a cluster (`rayClusterSpec`) or names an existing one (`clusterSelector`).

`clusterSelector` must hold a non-empty `ray.io/cluster` key.

Fails:

    kind: RayJob
    spec:
      clusterSelector: {app: ray}

Passes:

    kind: RayJob
    spec:
      clusterSelector: {ray.io/cluster: shared-cluster}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import job_views

ABOUT = About("rayjob/cluster-source", "error", "rayClusterSpec or a clusterSelector with ray.io/cluster is set")


def check(context: LintContext) -> Iterator[Problem]:
    for job in job_views(context):
        selector = job.cluster_selector
        if job.cluster is None and not selector:
            yield job.obj.problem("neither rayClusterSpec nor clusterSelector is set; add rayClusterSpec to create "
                                  "a cluster, or clusterSelector {ray.io/cluster: NAME} to use one", job.path)
        elif selector and not selector.get("ray.io/cluster"):
            yield job.obj.problem("clusterSelector has no ray.io/cluster name; add ray.io/cluster: <cluster name>",
                                  job.at("clusterSelector"))
