"""`krc lint` and `krc rules` end to end: exit codes, formats, environments and their rule settings."""
from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from project_support import REPO_ROOT

from compiler.cli import main
from compiler.project.paths import Project
from compiler.rules import RULES
from compiler.validation.checks import SCHEMA_CHECKS

BAD_JOB = """\
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: job
spec:
  ttlSecondsAfterFinished: 60
  clusterSelector:
    ray.io/cluster: shared
"""
WARNING_ONLY = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: c
spec:
  enableInTreeAutoscaling: true
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers: [{name: ray-head, image: "rayproject/ray:2.52.0"}]
"""


def _run(args: list[str], cwd: Path) -> tuple[int, str, str]:
    runner = CliRunner()
    with contextlib.chdir(cwd):  # relative paths in findings are relative to the cwd
        result = runner.invoke(main, args, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    (tmp_path / "bad.yaml").write_text(BAD_JOB, encoding="utf-8")
    (tmp_path / "ok.yaml").write_text(WARNING_ONLY, encoding="utf-8")
    return tmp_path


def test_text_output_and_exit_1_on_error(manifests: Path) -> None:
    code, out, err = _run(["lint", str(manifests / "bad.yaml")], manifests)
    assert code == 1
    line = out.splitlines()[0]
    assert re.match(r"^.*bad\.yaml:6:3: error: .*shutdownAfterJobFinishes.* \[rayjob/ttl-after-finished\]$", line)
    assert "1 error" in err and "1 errors" not in err


def test_warnings_only_exit_0(manifests: Path) -> None:
    code, out, _ = _run(["lint", str(manifests / "ok.yaml")], manifests)
    assert code == 0
    assert "[raycluster/autoscaler-version-unset]" in out


def test_json_format(manifests: Path) -> None:
    code, out, _ = _run(["lint", "--format", "json", str(manifests)], manifests)
    findings = json.loads(out)
    assert code == 1
    first = next(f for f in findings if f["rule"] == "rayjob/ttl-after-finished")
    assert first["severity"] == "error" and first["line"] == 6 and first["file"].endswith("bad.yaml")
    assert first["object"] == "RayJob/job"
    assert first["objectRef"] == {"kind": "RayJob", "namespace": "", "name": "job"}
    assert all({"rule", "severity", "message", "file", "line", "object"} <= set(f) for f in findings)


def test_sarif_format(manifests: Path) -> None:
    _, out, _ = _run(["lint", "--format", "sarif", str(manifests)], manifests)
    sarif = json.loads(out)
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert set(RULES) <= set(rule_ids)
    result = next(r for r in run["results"] if r["ruleId"] == "rayjob/ttl-after-finished")
    assert result["level"] == "error" and rule_ids[result["ruleIndex"]] == result["ruleId"]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 6


def test_github_format(manifests: Path) -> None:
    _, out, _ = _run(["lint", "--format", "github", str(manifests / "bad.yaml")], manifests)
    assert re.match(r"^::error file=.*bad\.yaml,line=6,col=3,title=rayjob/ttl-after-finished::RayJob/job: ", out)


def test_output_is_deterministic(manifests: Path) -> None:
    first = _run(["lint", "--format", "json", str(manifests)], manifests)[1]
    assert first == _run(["lint", "--format", "json", str(manifests)], manifests)[1]


def test_bad_input_exits_2(manifests: Path) -> None:
    (manifests / "broken.yaml").write_text("a: [\n", encoding="utf-8")
    assert _run(["lint", str(manifests / "broken.yaml")], manifests)[0] == 2
    assert _run(["lint", str(manifests / "missing.yaml")], manifests)[0] == 2
    code, _, err = _run(["lint", "--feature-gates", "NoSuchGate=true", str(manifests / "ok.yaml")], manifests)
    assert code == 2 and "NoSuchGate" in err
    assert _run(["lint", "--kuberay-version", "9.9.9", str(manifests / "ok.yaml")], manifests)[0] == 2


def test_feature_gates_and_version_change_findings(tmp_path: Path, shared_dir: Path) -> None:
    cron = shared_dir / "kuberay" / "samples" / "ray-cronjob.sample.yaml"
    assert "[feature-gates/controller-off]" in _run(["lint", str(cron)], tmp_path)[1]
    assert _run(["lint", "--feature-gates", "RayCronJob=true", str(cron)], tmp_path)[1] == ""
    code, out, _ = _run(["lint", "--kuberay-version", "1.5.2", str(cron)], tmp_path)
    assert code == 1 and "schema/" in out  # no RayCronJob CRD before 1.6


def test_rules_list_and_document() -> None:
    runner = CliRunner()
    listing = runner.invoke(main, ["rules"]).stdout.splitlines()
    # rules and schema checks, one line each, sorted by id
    policies = len(list((REPO_ROOT / "policies").glob("*.cue")))  # policy/NAME entries follow the rules
    assert len(listing) == len(RULES) + len(SCHEMA_CHECKS) + policies
    assert listing[0].startswith(sorted([*RULES, *SCHEMA_CHECKS])[0])
    doc = runner.invoke(main, ["rules", "raycronjob/schedule"])
    assert doc.exit_code == 0 and "Fails" in doc.stdout and "Passes" in doc.stdout
    assert runner.invoke(main, ["rules", "no/such-rule"]).exit_code == 2


def _with_gate(text: str, gate: str) -> str:
    """dev.yaml with an extra operator feature gate (the file has an operator: block with watchNamespaces)."""
    assert "\noperator:\n" in text
    return text.replace("\noperator:\n", f"\noperator:\n  featureGates: {{{gate}: true}}\n", 1)


def test_environments_lint_clean_and_report_environment_findings(project_without_policies: Project) -> None:
    project = project_without_policies
    code, out, _ = _run(["--project", str(project.root), "lint", "--format", "json"], project.root)
    assert code == 0, out
    dev = project.environment_file("dev")
    dev.write_text(_with_gate(dev.read_text(encoding="utf-8"), "AsyncJobInfoQuery"), encoding="utf-8")
    code, out, _ = _run(["--project", str(project.root), "lint", "dev", "--format", "json"], project.root)
    findings = json.loads(out)
    gate = next(f for f in findings if f["rule"] == "operator/unknown-feature-gate")
    assert code == 1 and gate["file"] == "environments/dev.yaml" and gate["line"] > 0


def test_environment_can_turn_a_rule_off_with_a_reason(project_without_policies: Project) -> None:
    project = project_without_policies
    dev = project.environment_file("dev")
    original = dev.read_text(encoding="utf-8")
    dev.write_text(_with_gate(original, "AsyncJobInfoQuery") + "lint:\n  rules:\n"
                   "    operator/unknown-feature-gate: {severity: warning, reason: testing a downgrade}\n",
                   encoding="utf-8")
    code, out, _ = _run(["--project", str(project.root), "lint", "dev", "--format", "json"], project.root)
    assert code == 0
    assert [f["severity"] for f in json.loads(out) if f["rule"] == "operator/unknown-feature-gate"] == ["warning"]
    dev.write_text(original + "lint:\n  rules:\n    operator/unknown-feature-gat: {severity: 'off', reason: x}\n",
                   encoding="utf-8")
    code, _, err = _run(["--project", str(project.root), "lint", "dev"], project.root)
    assert code == 2 and "did you mean 'operator/unknown-feature-gate'" in err
