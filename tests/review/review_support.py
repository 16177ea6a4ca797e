"""Helpers for the review tests: the CLI runner, file edits, git."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from click.testing import CliRunner

from compiler.cli import main
from compiler.project.paths import Project


def run(project: Project, *args: str):
    return CliRunner().invoke(main, ["--project", str(project.root), *args])


def diff_json(project: Project, *args: str) -> dict:
    result = run(project, "diff", "--format", "json", *args)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.output)


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= count, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.email=review@example.com", "-c", "user.name=Review", *args],
                          cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


def set_chart_version(project: Project, environment: str, old: str, new: str) -> None:
    edit(project.environment_file(environment), f"version: {old}", f"version: {new}")


def commit_project(project: Project, message: str) -> None:
    """Commit the whole project copy (a git repository made on first use)."""
    if not (project.root / ".git").exists():
        git(project.root, "init", "-q", "-b", "main")
        (project.root / ".gitignore").write_text("vendor/charts/\nrendered/\n")
    git(project.root, "add", "-A")
    git(project.root, "commit", "-q", "-m", message)


def report_env(report: dict, name: str) -> dict:
    return next(e for e in report["environments"] if e["name"] == name)
