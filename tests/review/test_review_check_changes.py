"""Checks are part of the change (issue 34, item 2): lint findings and policy results compared with the base's,
new and resolved ones right after the CRD gate, and a new error exits 1 although no object changed."""
from __future__ import annotations

import json

from gfm_support import read_page, render_gfm
from review_support import commit_project, git, report_env, run

from compiler.project.paths import Project

PROD = "prod-eks-gpu"
# production breaks it at once: it runs one Ray cluster of its own
QUOTA = ("// Production runs no Ray cluster of its own.\npackage policy\n\n"
         "if env.production {\n\tclusterCount: len(*env.clusters | []) & <=0\n}\n")
FOUND = "environment prod-eks-gpu: clusterCount: invalid value 1 (out of bound <=0)"


def test_a_new_policy_production_breaks_is_a_new_error_though_nothing_changed(accepted: Project):
    commit_project(accepted, "accepted")
    head = git(accepted.root, "rev-parse", "HEAD").strip()
    (accepted.policies_dir / "prod-cluster-quota.cue").write_text(QUOTA)

    text = run(accepted, "diff")
    assert text.exit_code == 1, text.output
    lines = text.output.splitlines()
    assert lines[1] == f"checks against HEAD ({head[:12]}): 1 new (1 error), 0 resolved (new errors block 'krc golden')"
    assert lines[2].startswith("   new      prod-eks-gpu: policies/prod-cluster-quota.cue:") and FOUND in lines[2]
    assert "== dev: no change" in text.output  # no object changed anywhere

    report = json.loads(run(accepted, "diff", "--format", "json").output)
    assert report["newCheckErrors"] == 1 and report["checksBase"] == f"HEAD ({head[:12]})" and report["changed"]
    [new] = report_env(report, PROD)["newChecks"]
    assert new["rule"] == "policy/prod-cluster-quota" and new["severity"] == "error"
    assert report_env(report, "dev")["newChecks"] == [] and report_env(report, "dev")["changed"] is False

    body = run(accepted, "diff", "--format", "markdown").output
    assert body.index(f"### Checks against HEAD ({head[:12]}): 1 new (1 error), 0 resolved") < body.index("### Summary")
    assert "- **new**: :x: **error** `prod-eks-gpu`" in body and "**1 new check error**" in body
    page = read_page(render_gfm(body))
    assert FOUND in page.text and page.mentions() == []

    # committed, the base has it too: nothing new against HEAD, and --base the commit before still sees it
    commit_project(accepted, "quota")
    assert run(accepted, "diff").exit_code == 0
    before = run(accepted, "diff", "--base", head)
    assert before.exit_code == 1 and f"checks against {head} ({head[:12]}): 1 new (1 error)" in before.output


def test_a_finding_gone_is_resolved_and_no_change(accepted: Project):
    (accepted.policies_dir / "prod-cluster-quota.cue").write_text(QUOTA)
    commit_project(accepted, "with the quota")
    (accepted.policies_dir / "prod-cluster-quota.cue").unlink()
    text = run(accepted, "diff")
    assert text.exit_code == 0, text.output  # a resolved finding blocks nothing
    assert "1 new" not in text.output and "0 new (0 errors), 1 resolved" in text.output
    assert "   resolved prod-eks-gpu: " in text.output and FOUND in text.output


def test_without_git_the_checks_are_not_compared_and_said_so(accepted: Project):
    text = run(accepted, "diff")
    assert text.exit_code == 0, text.output
    assert text.output.splitlines()[1].startswith("checks: checks not compared with a base: ")
