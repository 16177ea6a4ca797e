"""The pull-request comment stays under GitHub's limit however large the change, cutting details only."""
from __future__ import annotations

import re

import pytest
from review_support import edit, run, set_chart_version

from compiler.project.paths import Project
from compiler.review import COMMENT_LIMIT, MARKDOWN_BUDGET

# not about policies: no CUE engine run (the checks policies add are test_review_checks.py's subject)
pytestmark = pytest.mark.usefixtures("project_without_policies")

PROD = "prod-eks-gpu"


def balanced(body: str) -> None:
    assert body.count("<details>") == body.count("</details>")
    fences = re.findall(r"^(`{3,})", body, flags=re.MULTILINE)
    assert len(fences) % 2 == 0, "an unclosed code block would swallow the rest of the comment"


def test_markdown_stays_under_budget_on_a_huge_change(accepted: Project):
    set_chart_version(accepted, PROD, "1.6.2", "1.7.0")  # the CRD gate must survive the cut
    manifests = accepted.golden_dir / "dev" / "manifests"
    cluster = (manifests / "raycluster-ray-cpu-demo.yaml").read_text()
    # Sizes, not counts, decide the cuts: dev's details get an even share of the room (about 28 KB), and each
    # removed object is a 1.4 KB block with its whole YAML, so 40 of them overflow it (about 20 are counted); the
    # 2,000-line serveConfig is many times the share one block may take. (400 and 10,000 lines cut the same way.)
    for i in range(40):  # 40 objects no longer rendered: each a removed object with its whole YAML
        (manifests / f"raycluster-old-{i:03}.yaml").write_text(
            cluster.replace("name: ray-cpu-demo", f"name: old-{i:03}"))
    service = accepted.golden_dir / PROD / "manifests" / "rayservice-summarizer.yaml"
    huge = "".join(f"    - name: app-{i}\n      import_path: apps.app_{i}:deployment\n" for i in range(1000))
    edit(service, "  serveConfigV2: |\n    applications:\n", "  serveConfigV2: |\n    applications:\n" + huge)

    result = run(accepted, "diff", "--format", "markdown")
    assert result.exit_code == 1
    body = result.output
    assert len(body) <= MARKDOWN_BUDGET < COMMENT_LIMIT
    assert body.index("CRD upgrade gate: `prod-eks-gpu`") < body.index("### Summary") < body.index("### Details")
    assert "| `dev` | 0 | 40 | 0 | 13 | unchanged |" in body  # the summary is never cut
    assert "| `prod-eks-gpu` | 0 | 0 | 10 |" in body and "restart ×" in body  # impacts in plain words
    assert "### Details: `prod-eks-gpu`" in body  # each environment gets a share of the room
    assert "<code>helm/kuberay-operator.values.yaml</code>" in body  # the giant block did not take it all
    assert re.search(r"_\d+ more not shown here \(\d+ removed\): run `krc diff dev`, or see the full report in "
                     r"the CI job summary or the `krc-review` artifact \(krc-review.txt\)._", body)
    assert "more lines\n" in body and ("_Cut to fit the comment: run `krc diff prod-eks-gpu` for the rest, or see the "
                                       "full report in the CI job summary or the `krc-review` artifact") in body
    assert "read the job summary" not in body
    balanced(body)


def test_a_small_change_is_shown_in_full(accepted: Project):
    edit(accepted.environment_file("dev"), "maxReplicas: 2", "maxReplicas: 4")
    body = run(accepted, "diff", "--format", "markdown").output
    assert "Cut to fit" not in body and "more not shown" not in body
    assert "<details><summary>~ <code>RayCluster ray-demo/ray-cpu-demo</code> changed · 1 field</summary>" in body
    assert ("| `spec.workerGroupSpecs[groupName=cpu].maxReplicas` | `2` | `4` |") in body
    assert "| `dev` | 0 | 0 | 1 | 12 | unchanged | 3 → **5** | 0 | 6Gi → **10Gi** | none |" in body
    balanced(body)
