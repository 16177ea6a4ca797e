"""`backoffLimit` (retries, each on a new cluster) is non-negative and 0 where retries cannot work.

InteractiveMode and clusterSelector mode (from 1.6) do not support retries.

Fails:

    kind: RayJob
    spec:
      submissionMode: InteractiveMode
      backoffLimit: 2

Passes:

    kind: RayJob
    spec:
      submissionMode: K8sJobMode
      backoffLimit: 2
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import defaulted_int, job_views
from .support.versions import applies_to

ABOUT = About("rayjob/backoff-limit", "error",
              "backoffLimit is non-negative and 0 in InteractiveMode and clusterSelector mode")


def check(context: LintContext) -> Iterator[Problem]:
    for job in job_views(context):
        limit = defaulted_int(job.spec.get("backoffLimit"))
        path = job.at("backoffLimit")
        if limit is None:
            continue
        if limit < 0:
            yield job.obj.problem(f"backoffLimit is {limit}; use 0 or more", path)
        elif limit > 0 and job.cluster_selector and applies_to(">=1.6", context.operator_version):
            yield job.obj.problem("backoffLimit cannot be used with clusterSelector (retries need a new cluster); "
                                  "set it to 0 or use rayClusterSpec", path)
        elif limit > 0 and job.submission_mode == "InteractiveMode":
            yield job.obj.problem("backoffLimit cannot be used in InteractiveMode; set it to 0 or use another mode",
                                  path)
