"""The review carries the checks: lint and policy findings of changed environments, errors first; `krc golden`
refuses error-level findings, policies included, unless the environment lowers the rule with a reason."""
from __future__ import annotations

import json

from review_support import commit_project, edit, report_env, run

from compiler.output import folders
from compiler.project.paths import Project

PROD = "prod-eks-gpu"
GPU_GROUP = "      - name: gpu-a10g\n        minReplicas: 0\n        maxReplicas: 8\n"
LOWERED = ("lint:\n  rules:\n    policy/prod-gpu-limit:\n      severity: warning\n"
           "      reason: the Q4 training burst is approved by the platform team until 2027-01-31\n")


def test_a_policy_violation_blocks_golden_and_leads_the_review(accepted: Project):
    commit_project(accepted, "golden")
    before = folders.read_tree(accepted.golden_dir / PROD)
    edit(accepted.environment_file(PROD), GPU_GROUP, GPU_GROUP.replace("maxReplicas: 8", "maxReplicas: 24"))

    refused = run(accepted, "golden")
    assert refused.exit_code == 2
    assert "environment prod-eks-gpu: totalGpus: invalid value 39 (out of bound <=32)" in refused.output
    assert "[policy/prod-gpu-limit]" in refused.output and "golden/ not updated" in refused.output
    assert folders.read_tree(accepted.golden_dir / PROD) == before  # nothing written, dev neither

    report = json.loads(run(accepted, "diff", "--format", "json").output)
    prod = report_env(report, PROD)
    assert report["checkErrors"] == 1 and prod["checks"][0]["severity"] == "error"
    assert prod["checks"][0]["rule"] == "policy/prod-gpu-limit" and prod["checks"][0]["path"] == "totalGpus"
    assert [c["severity"] for c in prod["checks"]] == sorted(
        (c["severity"] for c in prod["checks"]), key=["error", "warning", "info"].index)  # errors first
    assert prod["limits"] == [{"policy": "policy/prod-gpu-limit", "resource": "gpu", "limit": 32, "value": 39,
                               "ok": False}]
    assert report_env(report, "dev")["checks"] == []  # unchanged environments carry no checks

    text = run(accepted, "diff").output
    assert "GPU 23 -> 39 / 32 ✗ (policy/prod-gpu-limit)" in text
    assert "   checks: 1 errors, " in text and "(errors block 'krc golden')" in text
    assert "     policies/prod-gpu-limit.cue:" in text
    body = run(accepted, "diff", "--format", "markdown").output
    assert "### Checks: 1 error" in body and body.index("### Checks") < body.index("### Summary")
    assert "23 → **39** / 32 **✗** (policy/prod-gpu-limit)" in body
    first = body.split("### Checks:", 1)[1].split("\n- ", 1)[1]
    assert first.startswith(":x: **error** `prod-eks-gpu` `policies/prod-gpu-limit.cue:")

    # lowered with a reason, the environment is accepted and the review says why
    edit(accepted.environment_file(PROD), "production: true\n", "production: true\n" + LOWERED)
    assert run(accepted, "golden").exit_code == 0, run(accepted, "golden").output
    commit_project(accepted, "burst")
    lowered = report_env(json.loads(run(accepted, "diff", "--base", "HEAD~1", "--format", "json").output), PROD)
    policy = next(c for c in lowered["checks"] if c["rule"] == "policy/prod-gpu-limit")
    assert policy["severity"] == "warning" and "(lowered: the Q4 training burst is approved" in policy["message"]
    assert lowered["limits"][0]["ok"] is False  # the capacity still shows it: 39 / 32 ✗


def test_a_setting_for_a_policy_that_does_not_exist_is_bad_input(accepted: Project):
    edit(accepted.environment_file(PROD), "production: true\n",
         "production: true\n" + LOWERED.replace("prod-gpu-limit", "prod-gpu-limits"))
    result = run(accepted, "golden", PROD)
    assert result.exit_code == 2
    assert "lint setting for 'policy/prod-gpu-limits', but policies/ has no prod-gpu-limits.cue" in result.output


def test_scaling_prod_ten_fold_is_a_violation_not_an_evaluation_failure(accepted: Project):
    path = accepted.environment_file(PROD)
    text = path.read_text()
    for value in ("10", "8", "2", "4", "1"):  # every maxReplicas, ten-fold (replicas stay: they now differ)
        text = text.replace(f"maxReplicas: {value}\n", f"maxReplicas: {value}0\n")
    path.write_text(text)
    result = run(accepted, "policy", PROD)
    assert result.exit_code == 1
    assert "totalGpus: invalid value 230 (out of bound <=32)" in result.output
    assert "unresolved disjunction" not in result.output and "incomplete" not in result.output
    assert run(accepted, "golden", PROD).exit_code == 2
