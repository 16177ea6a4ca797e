"""`ttlSecondsAfterFinished` only acts when `shutdownAfterJobFinishes` is true, and is never negative.

A TTL with shutdown off would clean up nothing, so the operator rejects it.

Fails:

    kind: RayJob
    spec:
      ttlSecondsAfterFinished: 600

Passes:

    kind: RayJob
    spec:
      shutdownAfterJobFinishes: true
      ttlSecondsAfterFinished: 600
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import defaulted_int, job_views

ABOUT = About("rayjob/ttl-after-finished", "error",
              "ttlSecondsAfterFinished is non-negative and comes with shutdownAfterJobFinishes")


def check(context: LintContext) -> Iterator[Problem]:
    for job in job_views(context):
        ttl = defaulted_int(job.spec.get("ttlSecondsAfterFinished"))
        if ttl is None:
            continue
        if ttl < 0:
            yield job.obj.problem(f"ttlSecondsAfterFinished is {ttl}; use 0 or more", job.at("ttlSecondsAfterFinished"))
        elif ttl > 0 and not job.shutdown:
            yield job.obj.problem("ttlSecondsAfterFinished is set but shutdownAfterJobFinishes is not true, so "
                                  "nothing would be cleaned up; set shutdownAfterJobFinishes: true or remove the TTL",
                                  job.at("ttlSecondsAfterFinished"))
