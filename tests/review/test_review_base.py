"""`krc diff --base REF`: golden/ read from git (a real repository made in tmp_path), not from the working tree."""
from __future__ import annotations

import shutil

import pytest
from review_support import diff_json, edit, git, run

from compiler.project.paths import Project

# not about policies: no CUE engine run (the checks policies add are test_review_checks.py's subject)
pytestmark = pytest.mark.usefixtures("project_without_policies")

PROD = "prod-eks-gpu"


def commit_all(root, message: str) -> None:
    git(root, "add", "-A", "--", "project/environments", "project/templates", "project/golden")
    git(root, "commit", "-q", "-m", message)


def test_base_compares_with_golden_as_committed(accepted: Project):
    repo = accepted.root.parent  # the project is a subdirectory of the repository: paths carry a prefix
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "golden")
    edit(accepted.environment_file(PROD), "route_prefix: /summarize", "route_prefix: /summarise")
    assert run(accepted, "golden", PROD).exit_code == 0
    commit_all(repo, "change the route and accept golden")

    assert run(accepted, "diff").exit_code == 0  # golden is current in the working tree
    result = run(accepted, "diff", "--base", "HEAD~1")
    assert result.exit_code == 1, result.output
    assert result.output.startswith("krc diff: render compared with golden/ at HEAD~1 (")
    report = diff_json(accepted, "--base", "main~1")
    prod = next(e for e in report["environments"] if e["name"] == PROD)
    [service] = prod["objects"]
    assert service["ref"] == "RayService ray-prod/summarizer" and service["fields"][0]["path"] == "spec.serveConfigV2"
    assert report["ref"] == "main~1" and report["base"].startswith("golden/ at main~1 (")
    assert not next(e for e in report["environments"] if e["name"] == "dev")["changed"]

    # read from git, not the working tree: removing golden/ changes nothing for --base
    shutil.rmtree(accepted.golden_dir)
    assert run(accepted, "diff", "--base", "HEAD").exit_code == 0
    assert run(accepted, "diff").exit_code == 1


def test_base_without_an_environment_is_a_first_render(accepted: Project):
    repo = accepted.root
    git(repo, "init", "-q", "-b", "main")
    shutil.move(str(accepted.golden_dir / "dev"), str(repo / "dev-golden"))
    git(repo, "add", "golden")
    git(repo, "commit", "-q", "-m", "prod only")
    report = diff_json(accepted, "--base", "HEAD")
    dev = next(e for e in report["environments"] if e["name"] == "dev")
    assert dev["firstRender"] is True and dev["counts"]["added"] == 13 and dev["crdGate"] is None
    prod = next(e for e in report["environments"] if e["name"] == PROD)
    assert prod["changed"] is False


def test_bad_refs_and_missing_git_repositories_exit_2(accepted: Project):
    result = run(accepted, "diff", "--base", "origin/main")
    assert result.exit_code == 2 and "is not in one" in result.output and "omit --base" in result.output
    git(accepted.root, "init", "-q", "-b", "main")
    git(accepted.root, "add", "golden")
    git(accepted.root, "commit", "-q", "-m", "golden")
    result = run(accepted, "diff", "--base", "origin/main")
    assert result.exit_code == 2
    assert "--base 'origin/main' is not a commit" in result.output and "git fetch origin main" in result.output
    result = run(accepted, "diff", "--base=--output=/tmp/x")  # never passed to git as an option
    assert result.exit_code == 2 and "is not a git ref" in result.output
