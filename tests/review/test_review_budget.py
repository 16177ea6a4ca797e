"""The pull-request comment stays under GitHub's limit when many environments change: what does not fit is said
in one line per item or counted, with a pointer to the full report.

What is cut depends on sizes, not on how many environments there are (format_markdown.py): CRD upgrade gates get
half the room left by the summary table (about 31 KB: seven of these 4 KB gates), checks 40% of what the gates
leave (about 12 KB: some 37 of these 330-character items). Ten environments, each with a gate and five GPU
groups (50 policy errors), overflow both; fifty environments with one error each did the same in four times the
time."""
from __future__ import annotations

import json
import re
import shutil

from review_support import commit_project, run

from compiler.project.paths import Project
from compiler.review import COMMENT_LIMIT, MARKDOWN_BUDGET

TEAMS = 10
GPU_GROUPS = 5
# Each team deploys dev, with GPU groups (the dev-no-gpu policy's error per group, a check), to a cluster of its
# own; the operator stays dev's, so Helm renders its chart once for all.
ENVIRONMENT = """extends: dev
cpuOnly: false
argocd:
  destination: {{name: team-{i:02}}}
clusters:
  - name: ray-cpu-demo
    workerGroups:
"""
GPU_GROUP = """      - name: gpu-workers-of-a-rather-long-name-{g}
        replicas: 0
        minReplicas: 0
        maxReplicas: 2
        cpu: 1
        memory: 2Gi
        gpu: 1
"""


def test_many_changed_environments_fit_the_comment(accepted: Project):
    for i in range(TEAMS):
        groups = "".join(GPU_GROUP.format(g=g) for g in range(GPU_GROUPS))
        accepted.environment_file(f"team-{i:02}").write_text(ENVIRONMENT.format(i=i) + groups)
        # golden as if on 1.6.2: a breaking CRD upgrade gate each
        shutil.copytree(accepted.golden_dir / "dev", accepted.golden_dir / f"team-{i:02}")
        shutil.copy(accepted.golden_dir / "prod-eks-gpu" / "crds.lock.yaml",
                    accepted.golden_dir / f"team-{i:02}" / "crds.lock.yaml")
    commit_project(accepted, "ten teams")

    result = run(accepted, "diff", "--base", "HEAD", "--format", "markdown",
                 "--output", f"json={accepted.root / 'krc-review.json'}",
                 "--output", f"text={accepted.root / 'krc-review.txt'}")
    assert result.exit_code == 1, result.output
    body = result.output
    assert len(body) <= MARKDOWN_BUDGET < COMMENT_LIMIT
    assert body.count("<details>") == body.count("</details>")
    assert len(re.findall(r"^(`{3,})", body, flags=re.MULTILINE)) % 2 == 0
    # every environment keeps its summary row; gates that do not fit are one line each, checks are counted
    assert all(f"| `team-{i:02}` |" in body for i in range(TEAMS))
    assert "### :warning: CRD upgrade gate: `team-00`" in body
    assert "### :warning: CRD upgrade gate: `team-09`" not in body
    assert "- :warning: `team-09`: CRD upgrade kuberay-operator 1.6.2 → 1.7.0" in body
    assert "_Shortened to fit the comment: run `krc diff`, or see the full report in the CI job summary or the " \
           "`krc-review` artifact (krc-review.txt)._" in body
    assert "### Checks: 50 errors" in body and re.search(r"- … \d+ more \(\d+ errors\): run `krc lint`", body)

    # the other formats came from the same compile and hold everything
    report = json.loads((accepted.root / "krc-review.json").read_text())
    assert len([e for e in report["environments"] if e["changed"]]) == TEAMS and report["checkErrors"] == 50
    full = (accepted.root / "krc-review.txt").read_text()
    assert full.count("!! CRD UPGRADE GATE: team-") == TEAMS and len(full) > COMMENT_LIMIT
