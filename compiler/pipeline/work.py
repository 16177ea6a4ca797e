"""The five kinds of work a plan (plans.py) is one of: the tag that names it in settings (how many environments
repay a worker) and says where it writes and what it compares with."""
from __future__ import annotations

import enum
from pathlib import Path

from ..project.paths import Project


class Work(enum.StrEnum):
    RENDER = "render"  # rendered/<env>/, with the chart's CRDs
    GOLDEN = "golden"  # golden/<env>/ becomes the render
    CHECK = "check"  # the render compared with golden/<env>/
    REVIEW = "review"  # krc diff: the review of each environment against its base
    LINT = "lint"  # findings and policy results

    @property
    def over_golden(self) -> bool:
        """Whether golden/ holds what it compares with, so an update the API server would refuse stops it."""
        return self in (Work.CHECK, Work.GOLDEN)

    def output_root(self, project: Project) -> Path:
        return project.rendered_dir if self is Work.RENDER else project.golden_dir
