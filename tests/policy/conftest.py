"""Fixtures for the policy tests: the real CUE engine (CUE v0.17 inside krc's engine binary, `make engine`) and a
read-only copy of the repository's project shared by the module-scoped batch runs."""
from __future__ import annotations

from pathlib import Path

import pytest
from project_support import copy_project

from compiler.policy.engine import CueEngine, find_engine
from compiler.project.paths import Project


@pytest.fixture(scope="session")
def engine() -> CueEngine:
    return find_engine()  # KrcError naming 'make engine' when the binary is missing


@pytest.fixture(scope="session")
def shipped_project(tmp_path_factory, vendor_cache: Path) -> Project:
    """The fixture project (read only: tests that change files use the `project` fixture)."""
    root = tmp_path_factory.mktemp("shipped") / "project"
    return copy_project(root, vendor_cache, parts=("environments", "templates", "policies"))
