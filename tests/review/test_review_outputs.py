"""`krc diff --output FORMAT=FILE` (issue 34, item 6): any folder the user can write, atomically, never through a
link planted in the project; bad targets are refused before anything is compiled, with nothing written."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from review_support import run

from compiler.project.paths import Project


@pytest.mark.usefixtures("project_without_policies")
def test_reports_go_to_a_folder_outside_the_project(accepted: Project, tmp_path: Path):
    reports = tmp_path / "runner-temp"
    reports.mkdir()
    (reports / "krc-review.json").write_text("old")  # replaced whole
    result = run(accepted, "diff", "--output", f"json={reports / 'krc-review.json'}",
                 "--output", f"text={reports / 'krc-review.txt'}", "--output", f"markdown={reports / 'r.md'}")
    assert result.exit_code == 0, result.output
    assert json.loads((reports / "krc-review.json").read_text())["changed"] is False
    assert (reports / "krc-review.txt").read_text() == result.output  # the text report is what was printed
    assert (reports / "r.md").read_text().startswith("## krc diff\n")
    assert sorted(p.name for p in reports.iterdir()) == ["krc-review.json", "krc-review.txt", "r.md"]  # no stage


@pytest.mark.usefixtures("project_without_policies")
def test_a_relative_report_lands_beside_the_working_directory(accepted: Project, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    assert run(accepted, "diff", "--output", "json=review.json").exit_code == 0
    assert json.loads((tmp_path / "review.json").read_text())["environments"]


@pytest.mark.usefixtures("project_without_policies")
def test_a_link_planted_in_the_project_is_never_followed(accepted: Project, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "authorized_keys"
    secret.write_text("ssh-ed25519 AAAA precious\n")
    # a linked folder inside the project: refused, nothing written anywhere
    (accepted.root / "reports").symlink_to(outside, target_is_directory=True)
    refused = run(accepted, "diff", "--output", f"json={accepted.root / 'reports' / 'authorized_keys'}")
    assert refused.exit_code == 2
    assert "reports is a symbolic link inside the project" in refused.output
    assert secret.read_text() == "ssh-ed25519 AAAA precious\n" and sorted(os.listdir(outside)) == ["authorized_keys"]
    # a link at the report's own name: the link is replaced by the report, its target left as it was
    planted = accepted.root / "krc-review.json"
    planted.symlink_to(secret)
    assert run(accepted, "diff", "--output", f"json={planted}").exit_code == 0
    assert not planted.is_symlink() and json.loads(planted.read_text())["changed"] is False
    assert secret.read_text() == "ssh-ed25519 AAAA precious\n"


@pytest.mark.parametrize("option, words", [
    ("yaml=r.yaml", "FORMAT one of text, markdown, json"),
    ("json=", "FORMAT one of"),
    ("json={missing}/r.json", "does not exist\n  help: create it first"),
    ("json={folder}", "is a folder\n  help: name a file in it"),
])
@pytest.mark.usefixtures("project_without_policies")
def test_a_bad_target_is_refused_in_one_line_before_compiling(accepted: Project, tmp_path: Path, option: str,
                                                                words: str):
    option = option.format(missing=tmp_path / "nope", folder=tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    result = run(accepted, "diff", "--output", option)
    assert result.exit_code == 2 and words in result.output
    assert result.output.startswith("krc: error: --output") and len(result.output.strip().splitlines()) <= 2
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not (accepted.root / "rendered").exists()


@pytest.mark.usefixtures("project_without_policies")
def test_a_folder_without_write_permission_is_refused(accepted: Project, tmp_path: Path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    if os.access(locked, os.W_OK):  # root may write anyway: then the folder must not refuse, and the report lands
        assert run(accepted, "diff", "--output", f"json={locked / 'r.json'}").exit_code == 0
        assert (locked / "r.json").is_file()
        return
    result = run(accepted, "diff", "--output", f"json={locked / 'r.json'}")
    assert result.exit_code == 2 and "permission denied" in result.output
