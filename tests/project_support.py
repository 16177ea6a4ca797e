"""The tests' own project: environments/ and golden/ from tests/fixtures/project/, the tool's code (templates,
policies, deploy/) from the repository. Regenerate the fixture's golden/ after a template change with
`make fixture-golden`."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

from compiler.project.paths import Project

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURE_PROJECT = Path(__file__).resolve().parent / "fixtures" / "project"
# What a project copy needs, and where each part comes from; rendered/ and vendor/charts are made fresh.
FIXTURE_PARTS = ("environments", "golden")
TOOL_PARTS = ("templates", "policies", "deploy")


def copy_project(destination: Path, vendor_cache: Path | None = None, *, data: Path = FIXTURE_PROJECT,
                 parts: tuple[str, ...] = FIXTURE_PARTS + TOOL_PARTS) -> Project:
    """A project at `destination`: environments/ and golden/ from `data` (the fixture project unless told), the
    tool's templates, policies and deploy/ from the repository, and the vendored charts when given."""
    for part in parts:
        source = (data if part in FIXTURE_PARTS else REPO_ROOT) / part
        if source.exists():
            shutil.copytree(source, destination / part)
    if vendor_cache is not None:
        shutil.copytree(vendor_cache, destination / "vendor")
    return Project(destination)


def copy_environment(project: Project, name: str) -> None:
    """A second environment like `name`, deploying to a cluster of its own (two environments may not share one:
    environment/destination-collision)."""
    text = project.environment_file(name).read_text(encoding="utf-8")
    copy = re.sub(r"(\n  destination: )\{[^}]*\}", rf"\1{{name: {name}-copy}}", text)
    assert copy != text
    project.environment_file(f"{name}-copy").write_text(copy, encoding="utf-8")


def engine_unavailable(monkeypatch, tmp_path: Path) -> None:
    """From now on (for the test), no engine can start: the one running ends and KRC_ENGINE names nothing, so a
    step that needed the engine fails; what the cache answers needs none."""
    from compiler.native import binary, client

    client.close_engine()
    monkeypatch.setenv(binary.VARIABLE, str(tmp_path / "no-such-engine"))
