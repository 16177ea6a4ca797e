"""`krc lint` on environments runs the organisation's CUE policies too (one engine request)."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from project_support import engine_unavailable

from compiler.cli import main
from compiler.pipeline import lint_targets
from compiler.project.paths import Project


def test_lint_reports_a_policy_violation_with_its_rule_id(project: Project):
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text().replace("        maxReplicas: 2\n", "        maxReplicas: 2\n        gpu: 2\n"))
    findings = lint_targets([], project_root=project.root)
    policy = [f for f in findings if f.rule == "policy/dev-no-gpu"]
    assert policy, [f.one_line() for f in findings]
    assert policy[0].severity == "error" and policy[0].location.file == "environments/dev.yaml"


def test_lint_without_the_engine_is_an_input_error_saying_how_to_build_it(project: Project, monkeypatch,
                                                                          tmp_path: Path):
    """The engine renders the charts and evaluates the policies: without it nothing is checked, and a CI job
    fails (exit 2) instead of passing as if the policies had been checked."""
    engine_unavailable(monkeypatch, tmp_path)
    result = CliRunner().invoke(main, ["--project", str(project.root), "lint"])
    assert result.exit_code == 2, result.output
    assert "KRC_ENGINE=" in result.stderr and "is not an executable file" in result.stderr
