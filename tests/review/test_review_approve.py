"""`krc approve ENV --reason TEXT`: the approval file for the current CRD change, round trip through krc diff."""
from __future__ import annotations

import json

import pytest
import yaml
from review_support import commit_project, report_env, run, set_chart_version

from compiler.project.paths import Project

# not about policies: no CUE engine run (the checks policies add are test_review_checks.py's subject)
pytestmark = pytest.mark.usefixtures("project_without_policies")

PROD = "prod-eks-gpu"
REASON = "workloadRef is unused here; the krc-prod-eks-gpu-crds app applies the CRDs server-side first"


def test_approve_writes_the_file_krc_diff_accepts(accepted: Project):
    commit_project(accepted, "prod on 1.6.2")
    set_chart_version(accepted, PROD, "1.6.2", "1.7.0")
    assert run(accepted, "golden", PROD).exit_code == 0
    commit_project(accepted, "prod on 1.7.0")
    approval = accepted.root / "approvals" / f"{PROD}.crd-upgrade.yaml"

    for reason, words in (("", "--reason is empty"), ("TODO: explain", "--reason is still the placeholder")):
        refused = run(accepted, "approve", PROD, "--reason", reason, "--base", "HEAD~1")
        assert refused.exit_code == 2 and words in refused.output and not approval.exists()
    # golden/ already moved: against the working tree there is nothing to approve, and the message says why
    nothing = run(accepted, "approve", PROD, "--reason", REASON)
    assert nothing.exit_code == 2 and "needs --base, e.g. --base origin/main" in nothing.output
    assert run(accepted, "approve", "dev", "--reason", REASON, "--base", "HEAD~1").exit_code == 2

    written = run(accepted, "approve", PROD, "--reason", REASON, "--base", "HEAD~1")
    assert written.exit_code == 0, written.output
    assert f"wrote approvals/{PROD}.crd-upgrade.yaml: approves {PROD} 1.6.2 -> 1.7.0" in written.output
    data = yaml.safe_load(approval.read_text())
    assert (data["fromVersion"], data["toVersion"], data["reason"]) == ("1.6.2", "1.7.0", REASON)
    report = json.loads(run(accepted, "diff", "--base", "HEAD~1", "--format", "json").output)
    gate = report_env(report, PROD)["crdGate"]
    assert gate["approval"]["status"] == "approved" and report["crdGatesUnapproved"] == []

    data["toVersion"] = "1.7.1"  # an edited approval names the wrong field
    approval.write_text(yaml.safe_dump(data))
    gate = report_env(json.loads(run(accepted, "diff", "--base", "HEAD~1", "--format", "json").output), PROD)["crdGate"]
    assert gate["approval"]["problems"] == ["toVersion is '1.7.1', the change has '1.7.0'"]
