"""Fixtures for the review tests: a project copy whose golden/ is the current render."""
from __future__ import annotations

import pytest

from compiler import pipeline
from compiler.project.paths import Project


@pytest.fixture
def accepted(project: Project) -> Project:
    """The project copy, whose golden/ (the committed one) is the current render: `krc diff` starts clean.

    tests/test_pipeline.py holds the committed golden/ to that; here it is checked without the policies
    `krc golden` would run (a CUE run per test)."""
    assert all(m.clean for m in pipeline.check_golden(project, project.environment_names()))
    return project
