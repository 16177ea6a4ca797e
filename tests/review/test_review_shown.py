"""A change is shown where it is: list elements, the differing part of a long string, added subtrees as YAML,
RBAC rules by what they grant (issue 34, item 1)."""
from __future__ import annotations

import re

import pytest
from gfm_support import read_page, render_gfm
from review_support import diff_json, edit, report_env, run, set_chart_version

from compiler.project.paths import Project
from compiler.review.fielddiff import GRANT, Match, diff_documents
from compiler.review.showing import ELLIPSIS, around_difference

PROD = "prod-eks-gpu"
GPU_GROUP = """      - name: gpu-l4
        minReplicas: 0
        maxReplicas: 4
        cpu: 7
        memory: 28Gi
        gpu: 1
        nodeSelector:
          karpenter.sh/nodepool: gpu
          karpenter.k8s.aws/instance-gpu-name: l4
"""


def test_a_list_is_compared_element_by_element():
    old = {"args": ["--a", "--b", "--gates=X=true", "--c"]}
    new = {"args": ["--a", "--new", "--b", "--gates=X=true,Y=false"]}
    assert [(c.where, c.op, c.old, c.new) for c in diff_documents(old, new)] == [
        (("args", 1), "added", None, "--new"),
        (("args", 3), "changed", "--gates=X=true", "--gates=X=true,Y=false"),
        (("args", 3), "removed", "--c", None)]
    # lists of maps without names too: an inserted toleration is that toleration, not every later one changed
    tolerations = [{"key": "a"}, {"key": "b"}]
    [change] = diff_documents({"t": tolerations}, {"t": [{"key": "new"}, *tolerations]})
    assert (change.path, change.op, change.new) == ("t[0]", "added", {"key": "new"})


def test_rbac_rules_are_matched_by_what_they_grant():
    rule = {"apiGroups": ["ray.io"], "resources": ["rayjobs"], "verbs": ["get"]}
    old = {"rules": [{"apiGroups": [""], "resources": ["events"], "verbs": ["create"]}, rule]}
    new = {"rules": [{**rule, "verbs": ["get", "delete"]}]}
    changes = diff_documents(old, new)
    assert [(c.path, c.op) for c in changes] == [("rules[core: events]", "removed"),
                                                 ("rules[ray.io: rayjobs].verbs[1]", "added")]
    assert changes[1].where == ("rules", Match(GRANT, "ray.io: rayjobs"), "verbs", 1)


@pytest.mark.parametrize("start, size", [(0, 10), (150, 5), (400, 1), (399, 300), (1000, 0)])
def test_a_long_string_is_shown_from_before_its_first_difference(start, size):
    old = "a" * start + "OLD" * size + "z" * 500
    new = "a" * start + "NEW" * size + "z" * 500 if size else old + "-more"
    shown_old, shown_new = around_difference(old, new, 300)
    first = start if size else len(old)
    for full, shown in ((old, shown_old), (new, shown_new)):
        body = shown.removeprefix(ELLIPSIS).removesuffix(ELLIPSIS)
        offset = full.index(body)
        assert offset <= first < offset + len(body) or first == len(full), (offset, len(body))
        assert len(shown) <= 300 + 2 * len(ELLIPSIS) + 40


def test_a_chart_bump_and_a_new_gpu_group_read_as_what_changed(accepted: Project):
    set_chart_version(accepted, PROD, "1.6.2", "1.7.0")
    edit(accepted.environment_file(PROD), "          node.kubernetes.io/instance-type: g5.12xlarge\n",
         "          node.kubernetes.io/instance-type: g5.12xlarge\n" + GPU_GROUP)
    body = run(accepted, "diff", PROD, "--format", "markdown").output
    # the operator's feature-gates argument, element by element, and its new gates visible in the cell
    arg = re.compile(r"containers\[name=kuberay-operator\]\.args\[\d+\]")
    _, before, after = next(line for line in body.splitlines() if arg.search(line)).split(" | ")[:3]
    assert "RayClusterHistoryServer=false" in after and "RayClusterHistoryServer" not in before
    # RBAC: permissions gained and lost, no rule matched by position
    assert "- **permissions**: permissions gained in namespace ray-prod: cert-manager.io/certificates: create" in body
    assert "- **permissions**: permissions lost in namespace ray-prod: events: " in body
    assert not re.search(r"rules\[\d+\]", body) and "rules\\[cert-manager.io: certificates\\]" not in body
    assert "`rules[cert-manager.io: certificates]`" in body
    # the new worker group: a folded YAML block, not a cut JSON line
    assert ("<details><summary><code>spec.workerGroupSpecs[groupName=gpu-l4]</code> added (27 lines)</summary>"
            in body)
    assert "```yaml\ngroupName: gpu-l4\nmaxReplicas: 4\n" in body and '{"groupName": "gpu-l4"' not in body
    page = read_page(render_gfm(body))
    assert page.opened.count("details") == page.closed.count("details")

    report = diff_json(accepted, PROD)
    role = next(o for o in report_env(report, PROD)["objects"] if o["ref"] == "Role ray-prod/kuberay-operator")
    added = next(f for f in role["fields"] if f["path"] == "rules[cert-manager.io: certificates]")
    assert added["op"] == "added"
    assert added["where"] == ["rules", {"key": "grant", "value": "cert-manager.io: certificates"}]
    assert {label["impact"] for label in role["labels"]} == {"permissions"}

    text = run(accepted, "diff", PROD).output
    assert "    [permissions] permissions gained in namespace ray-prod" in text
    assert "    spec.workerGroupSpecs[groupName=gpu-l4]: added\n      + groupName: gpu-l4\n" in text
