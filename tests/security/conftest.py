"""A rendered project to attack: golden/, rendered/ and vendor/ all present, plus a folder outside it."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from project_support import copy_project

from compiler import pipeline
from compiler.project import Project


@pytest.fixture(scope="session")
def rendered_template(tmp_path_factory, vendor_cache: Path) -> Path:
    """Made once per session: a project copy with rendered/ written by a real render."""
    project = copy_project(tmp_path_factory.mktemp("hostile") / "project", vendor_cache)
    pipeline.render_to_disk(project, project.environment_names())
    return project.root


@pytest.fixture
def target(tmp_path: Path, rendered_template: Path) -> tuple[Project, Path]:
    """A private copy of the rendered project, and a folder outside it holding files an attacker wants."""
    root = tmp_path / "project"
    shutil.copytree(rendered_template, root, symlinks=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text("password: hunter2\n")
    (outside / "secret.jsonnet").write_text("{ password: 'hunter2' }\n")
    (outside / "keep").mkdir()
    (outside / "keep" / "data.txt").write_text("must survive\n")
    return Project(root), outside
