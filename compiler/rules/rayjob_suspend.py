"""A suspended RayJob must shut its cluster down when it finishes, and cannot use an existing cluster.

Fails:

    kind: RayJob
    spec:
      suspend: true
      shutdownAfterJobFinishes: false

Passes:

    kind: RayJob
    spec:
      suspend: true
      shutdownAfterJobFinishes: true
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import job_views

ABOUT = About("rayjob/suspend", "error", "suspend needs shutdownAfterJobFinishes and no clusterSelector")


def check(context: LintContext) -> Iterator[Problem]:
    for job in job_views(context):
        if job.spec.get("suspend") is not True:
            continue
        if not job.shutdown:
            yield job.obj.problem("suspend is true but shutdownAfterJobFinishes is not; set "
                                  "shutdownAfterJobFinishes: true", job.at("suspend"))
        if job.cluster_selector:
            yield job.obj.problem("suspend is not supported with clusterSelector (an existing cluster); remove "
                                  "suspend or use rayClusterSpec", job.at("suspend"))
