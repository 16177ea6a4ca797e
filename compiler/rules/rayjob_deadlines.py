"""Deadlines, when set, are positive numbers of seconds.

Fails:

    kind: RayJob
    spec:
      activeDeadlineSeconds: 0

Passes:

    kind: RayJob
    spec:
      activeDeadlineSeconds: 3600
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import int_or, job_views

ABOUT = About("rayjob/deadlines", "error", "activeDeadlineSeconds and preRunningDeadlineSeconds are positive")


def check(context: LintContext) -> Iterator[Problem]:
    for job in job_views(context):
        for field in ("activeDeadlineSeconds", "preRunningDeadlineSeconds"):
            value = job.spec.get(field)
            if value is not None and int_or(value, 0) <= 0:
                yield job.obj.problem(f"{field} is {value}; use a positive number of seconds or remove it",
                                      job.at(field))
