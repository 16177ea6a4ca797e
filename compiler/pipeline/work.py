"""What a job does with its environments: one of five kinds of work, each saying what it writes and compares."""
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
    def writes(self) -> bool:
        """Whether its environments are staged into an output folder (output_root)."""
        return self in (Work.RENDER, Work.GOLDEN)

    @property
    def over_golden(self) -> bool:
        """Whether golden/ holds what it compares with, so an update the API server would refuse stops it."""
        return self in (Work.CHECK, Work.GOLDEN)

    @property
    def answered_by_summary(self) -> bool:
        """Whether an environment whose output is already right is answered from its cache summary alone."""
        return self in (Work.RENDER, Work.CHECK, Work.GOLDEN)

    def output_root(self, project: Project) -> Path:
        return project.rendered_dir if self is Work.RENDER else project.golden_dir
