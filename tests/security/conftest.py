"""A rendered project to attack: golden/, rendered/ and vendor/ all present, plus a folder outside it."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from project_support import copy_project

from compiler import pipeline
from compiler.project.paths import Project


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
    rendered = str(rendered_template / "rendered") + os.sep

    def link_rendered(source: str, destination: str) -> object:
        # rendered/ (megabytes of CRDs, copied for each of 130 cases) is linked, not copied: no case edits a file
        # there in place, and krc replaces files (a new inode), so the case's snapshot still sees any write, and
        # the template stays as it was
        if source.startswith(rendered):
            os.link(source, destination)
            return destination
        return shutil.copy2(source, destination)

    shutil.copytree(rendered_template, root, symlinks=True, copy_function=link_rendered)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text("password: hunter2\n")
    (outside / "secret.jsonnet").write_text("{ password: 'hunter2' }\n")
    (outside / "keep").mkdir()
    (outside / "keep" / "data.txt").write_text("must survive\n")
    return Project(root), outside
