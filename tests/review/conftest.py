"""Fixtures for the review tests: a project copy whose golden/ is the current render."""
from __future__ import annotations

import pytest

from compiler import pipeline
from compiler.project import Project


@pytest.fixture
def accepted(project: Project) -> Project:
    """The project copy with golden/ accepted from the current render: `krc diff` starts clean."""
    pipeline.accept_golden(project, project.environment_names())
    return project
