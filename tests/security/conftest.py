"""A rendered project to attack: golden/, rendered/ and vendor/ all present, plus a folder outside it."""
from __future__ import annotations

from pathlib import Path

import pytest
from security_support import copy_tree

from compiler import pipeline
from compiler.project import Project

REPO_ROOT = Path(__file__).resolve().parents[2]
PROJECT_PARTS = ("environments", "templates", "golden", "policies")


@pytest.fixture(scope="session")
def rendered_template(tmp_path_factory, vendor_cache: Path) -> Path:
    """Made once per session: a project copy with rendered/ written by a real render."""
    root = tmp_path_factory.mktemp("hostile") / "project"
    for part in PROJECT_PARTS:
        copy_tree(REPO_ROOT / part, root / part)
    copy_tree(vendor_cache, root / "vendor")
    project = Project(root)
    pipeline.render_to_disk(project, project.environment_names())
    return project.root


@pytest.fixture
def target(tmp_path: Path, rendered_template: Path) -> tuple[Project, Path]:
    """A private copy of the rendered project, and a folder outside it holding files an attacker wants."""
    root = tmp_path / "project"
    copy_tree(rendered_template, root)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text("password: hunter2\n")
    (outside / "secret.jsonnet").write_text("{ password: 'hunter2' }\n")
    (outside / "keep").mkdir()
    (outside / "keep" / "data.txt").write_text("must survive\n")
    return Project(root), outside
