"""The reusable GitHub Action (action.yml) run step by step on a pull request of the fixture project: krc from
this checkout, the GitHub API a local HTTP server (issue 34, item 6)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from action_support import base_environment, run_action
from http_support import base_url, serving
from review_support import commit_project, git, set_chart_version
from test_review_workflow import MARKER, FakeGitHub

from compiler.project.paths import Project

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.usefixtures("project_without_policies")  # the policies' own run is tested elsewhere: no CUE here
def test_the_action_reviews_a_pull_request_and_blocks_what_must_not_merge(accepted: Project, tmp_path: Path):
    workspace = accepted.root
    commit_project(accepted, "golden")
    git(workspace, "checkout", "-q", "-b", "bump")
    set_chart_version(accepted, "prod-eks-gpu", "1.6.2", "1.7.0")  # a breaking CRD upgrade, golden/ not updated
    commit_project(accepted, "prod: KubeRay 1.7.0")
    FakeGitHub.comments, FakeGitHub.calls, FakeGitHub.deny = [], [], False
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 5, "labels": []}}))
    with serving(FakeGitHub) as server:
        env = base_environment(tmp_path, {"GITHUB_API_URL": base_url(server), "GITHUB_REPOSITORY": "acme/ray",
                                          "GITHUB_EVENT_PATH": str(event)})
        state = run_action(REPO / "action.yml", workspace, {"install": "false", "ray-generators": "false",
                                                            "base": "main"},
                           {"token": "t0ken", "action_path": str(REPO), "base_ref": "main", "run_id": "77",
                            "run_attempt": "1", "event": {"pull_request": {"number": 5}}}, env)
    ran = {name: (code, out) for name, code, out in state.ran}
    assert ran["golden/ is the current render"][0] == 0  # the step records krc check's exit, and goes on
    assert state.outputs["check"]["outputs"]["exit-code"] == "1"
    assert state.outputs["review"]["outputs"]["exit-code"] == "1"
    reports = Path(state.outputs["review"]["outputs"]["reports"])
    assert reports.parent == tmp_path / "runner-temp"
    report = json.loads((reports / "krc-review.json").read_text())
    assert report["crdGatesUnapproved"] == ["prod-eks-gpu"]
    assert (reports / "krc-review.html").read_text().startswith("<!DOCTYPE html>")  # the artifact's page
    body = (reports / "krc-review.md").read_text()
    assert body.startswith("## krc diff\n") and "CRD upgrade gate" in body
    [comment] = [c for c in FakeGitHub.comments if MARKER in c["body"]]
    assert comment["body"] == f"{MARKER}\n{body}" and ("POST", "/repos/acme/ray/issues/5/comments") in FakeGitHub.calls
    assert (tmp_path / "summary.md").read_text().startswith("## krc diff\n")
    code, out = ran["What blocks the merge"]
    assert code == 1 and "::error::prod-eks-gpu: breaking CRD upgrade kuberay-operator 1.6.2 -> 1.7.0" in out
    assert "::error::golden/ is not the current render: run krc golden" in out
    # GitHub's own actions are used, with their inputs resolved: the artifact is the review folder
    used = dict(state.used)
    assert used["actions/upload-artifact@v4"] == {"name": "krc-review", "path": str(reports)}
    assert "actions/setup-python@v5" not in used  # install: false
    # krc's cache is restored before the first krc step that compiles and saved after the review, under a key of
    # krc, the chart lock and the templates plus the run, restored by that key's prefix; the krc steps between
    # used that very folder (GITHUB_ENV)
    folder = state.outputs["keys"]["outputs"]["cache-dir"]
    key = state.outputs["keys"]["outputs"]["key"]
    assert folder == env["KRC_CACHE_DIR"] and key.startswith("krc-cache-")
    assert used["actions/cache/restore@v4"] == {"path": folder, "key": f"{key}-77-1", "restore-keys": f"{key}-"}
    assert used["actions/cache/save@v4"] == {"path": folder, "key": f"{key}-77-1"}
    # ray-generators: false, so Ray's virtual environments are neither restored nor kept
    assert [name for name, _ in state.used if name.startswith("actions/cache")] == \
        ["actions/cache/restore@v4", "actions/cache/save@v4"]


@pytest.mark.usefixtures("project_without_policies")
def test_on_a_push_to_main_the_action_reviews_the_commit_and_keeps_the_cache(accepted: Project, tmp_path: Path):
    """The workflow's push run (base HEAD, no comment): nothing to review against, nothing blocks, and krc's cache
    is kept for the pull requests that start from main."""
    workspace = accepted.root
    commit_project(accepted, "golden")
    FakeGitHub.comments, FakeGitHub.calls, FakeGitHub.deny = [], [], False
    with serving(FakeGitHub) as server:
        env = base_environment(tmp_path, {"GITHUB_API_URL": base_url(server), "GITHUB_REPOSITORY": "acme/ray"})
        state = run_action(REPO / "action.yml", workspace, {"install": "false", "ray-generators": "false",
                                                            "base": "HEAD", "comment": "false"},
                           {"token": "t0ken", "action_path": str(REPO), "base_ref": "", "run_id": "78",
                            "run_attempt": "1", "event": {}}, env)
    assert not state.failed, state.ran
    assert [code for _, code, _ in state.ran] == [0] * len(state.ran)
    assert state.outputs["review"]["outputs"]["exit-code"] == "0" and FakeGitHub.calls == []
    key = state.outputs["keys"]["outputs"]["key"]
    assert dict(state.used)["actions/cache/save@v4"] == {"path": env["KRC_CACHE_DIR"], "key": f"{key}-78-1"}
