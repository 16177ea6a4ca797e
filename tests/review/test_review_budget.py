"""The pull-request comment stays under GitHub's limit with 50 changed environments: what does not fit is said in
one line per item or counted, with a pointer to the full report."""
from __future__ import annotations

import json
import re
import shutil

from review_support import commit_project, run

from compiler.project import Project
from compiler.review import COMMENT_LIMIT, MARKDOWN_BUDGET

# Each team deploys dev, with a GPU (the dev-no-gpu policy's error, a check), to a cluster of its own; the operator
# stays dev's, so Helm renders its chart once for all fifty.
ENVIRONMENT = """extends: dev
cpuOnly: false
argocd:
  destination: {{name: team-{i:02}}}
clusters:
  - name: ray-cpu-demo
    workerGroups:
      - name: cpu
        maxReplicas: 2
        gpu: 1
"""


def test_fifty_changed_environments_fit_the_comment(accepted: Project):
    for i in range(50):
        accepted.environment_file(f"team-{i:02}").write_text(ENVIRONMENT.format(i=i))
        if i < 12:  # golden as if on 1.6.2: a breaking CRD upgrade gate each
            shutil.copytree(accepted.golden_dir / "dev", accepted.golden_dir / f"team-{i:02}")
            shutil.copy(accepted.golden_dir / "prod-eks-gpu" / "crds.lock.yaml",
                        accepted.golden_dir / f"team-{i:02}" / "crds.lock.yaml")
    commit_project(accepted, "fifty teams")

    result = run(accepted, "diff", "--base", "HEAD", "--format", "markdown",
                 "--output", f"json={accepted.root / 'krc-review.json'}",
                 "--output", f"text={accepted.root / 'krc-review.txt'}")
    assert result.exit_code == 1, result.output
    body = result.output
    assert len(body) <= MARKDOWN_BUDGET < COMMENT_LIMIT
    assert body.count("<details>") == body.count("</details>")
    assert len(re.findall(r"^(`{3,})", body, flags=re.MULTILINE)) % 2 == 0
    # every environment keeps its summary row; gates that do not fit are one line each, checks are counted
    assert all(f"| `team-{i:02}` |" in body for i in range(50))
    assert "### :warning: CRD upgrade gate: `team-00`" in body
    assert "- :warning: `team-11`: CRD upgrade kuberay-operator 1.6.2 → 1.7.0" in body
    assert "_Shortened to fit the comment: run `krc diff`, or see the full report in the CI job summary or the " \
           "`krc-review` artifact (krc-review.txt)._" in body
    assert "### Checks: 50 errors" in body and re.search(r"- … \d+ more \(\d+ errors\): run `krc lint`", body)

    # the other formats came from the same compile and hold everything
    report = json.loads((accepted.root / "krc-review.json").read_text())
    assert len([e for e in report["environments"] if e["changed"]]) == 50 and report["checkErrors"] == 50
    full = (accepted.root / "krc-review.txt").read_text()
    assert full.count("!! CRD UPGRADE GATE: team-") == 12 and len(full) > COMMENT_LIMIT
