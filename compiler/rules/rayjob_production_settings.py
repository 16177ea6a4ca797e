"""In production, a RayJob states its deadline, its retries and its clean-up.

Without `activeDeadlineSeconds` a hung job holds its cluster forever; with `backoffLimit` 0 a transient
failure is final; without `shutdownAfterJobFinishes` (or a `deletionStrategy`) the cluster outlives the job.

Fails (production environment):

    kind: RayJob
    spec:
      entrypoint: python train.py

Passes:

    kind: RayJob
    spec:
      entrypoint: python train.py
      activeDeadlineSeconds: 7200
      backoffLimit: 2
      shutdownAfterJobFinishes: true
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import defaulted_int, job_views

ABOUT = About("rayjob/production-settings", "warning",
              "production RayJobs set a deadline, retries and clean-up", environment_only=True)


def check(context: LintContext) -> Iterator[Problem]:
    if not context.production:
        return
    for job in job_views(context):
        obj = job.obj
        if job.spec.get("activeDeadlineSeconds") is None:
            yield obj.problem("this production RayJob has no activeDeadlineSeconds, so a hung job runs forever; set "
                              "a deadline", job.path)
        if defaulted_int(job.spec.get("backoffLimit")) == 0 and not job.cluster_selector and \
                job.submission_mode != "InteractiveMode":
            yield obj.problem("this production RayJob has no retries (backoffLimit 0); set backoffLimit, e.g. 2",
                              job.at("backoffLimit"))
        if job.cluster is not None and not job.shutdown and job.spec.get("deletionStrategy") is None:
            yield obj.problem("this production RayJob never deletes its cluster; set shutdownAfterJobFinishes: true "
                              "(with ttlSecondsAfterFinished) or a deletionStrategy", job.path)
