"""The CRD upgrade gate: chart promotions with the real charts, cross-upgrade schema checks, the approval file."""
from __future__ import annotations

import json

import pytest
import yaml
from review_support import diff_json, edit, run, set_chart_version

from compiler.project.paths import Project

# not about policies: no CUE engine run (the checks policies add are test_review_checks.py's subject)
pytestmark = pytest.mark.usefixtures("project_without_policies")

PROD = "prod-eks-gpu"
HELM_WORDS = "`helm upgrade` installs a chart's crds/ only on first install: it will NOT upgrade the changed CRDs"
APPLY = "kubectl apply --server-side --force-conflicts -f rendered/prod-eks-gpu/crds/"


def gate(report: dict) -> dict:
    return next(e for e in report["environments"] if e["name"] == PROD)["crdGate"]


def test_promoting_prod_to_1_7_0_trips_the_gate_in_every_format(accepted: Project):
    set_chart_version(accepted, PROD, "1.6.2", "1.7.0")
    text = run(accepted, "diff")
    assert text.exit_code == 1
    lines = text.output.splitlines()
    assert lines[1] == "!! CRD UPGRADE GATE: prod-eks-gpu"  # first, before any environment
    assert "moves kuberay-operator 1.6.2 -> 1.7.0" in lines[2]
    assert HELM_WORDS in text.output and APPLY in text.output
    assert "deleting a CRD by hand deletes every object of its kind" in text.output
    assert "krc-prod-eks-gpu-crds (syncOptions ServerSideApply=true)" in text.output
    assert "crd-diff kuberay-operator 1.6.2 -> 1.7.0: 81 CRD changes: 17 breaking, 3 warning, 61 info" in text.output
    # one field removed in 17 places is one line, with its 17 places
    assert "     breaking workloadRef in 17 places: field removed: existing values are pruned" in text.output
    places = next(line for line in lines if line.startswith("       at rayclusters.ray.io v1 spec.headGroupSpec"))
    assert places.count("; ") == 16 and text.output.count("breaking workloadRef") == 1
    assert "NOT APPROVED (17 breaking CRD changes): missing approvals/prod-eks-gpu.crd-upgrade.yaml" in text.output

    markdown = run(accepted, "diff", "--format", "markdown")
    assert markdown.exit_code == 1
    body = markdown.output
    assert body.index("### :warning: CRD upgrade gate: `prod-eks-gpu`") < body.index("### Summary")
    assert HELM_WORDS in body and APPLY in body and "17 breaking" in body
    assert "| `prod-eks-gpu` |" in body and "**1.6.2 → 1.7.0** (approval missing)" in body

    result = run(accepted, "diff", "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.output)
    found = gate(report)
    assert (found["oldVersion"], found["newVersion"]) == ("1.6.2", "1.7.0")
    assert found["counts"] == {"breaking": 17, "warning": 3, "info": 61} and len(found["breaking"]) == 17
    [group] = found["breakingGroups"]
    assert (group["field"], group["check"], group["count"], len(group["places"])) == ("workloadRef", "field-removed",
                                                                                      17, 17)
    assert {c["status"] for c in found["crds"]} == {"changed"}
    assert HELM_WORDS in " ".join(found["statements"]) and found["crdApplication"] == "krc-prod-eks-gpu-crds"
    assert found["approval"]["status"] == "missing" and report["crdGatesUnapproved"] == [PROD]
    dev = next(e for e in report["environments"] if e["name"] == "dev")
    assert dev["crdGate"] is None


def test_an_approval_file_naming_the_change_approves_it(accepted: Project):
    set_chart_version(accepted, PROD, "1.6.2", "1.7.0")
    template = gate(diff_json(accepted))["approval"]["template"]
    approval = accepted.root / "approvals" / f"{PROD}.crd-upgrade.yaml"
    approval.parent.mkdir()
    approval.write_text(template)  # the placeholder reason does not approve
    found = gate(diff_json(accepted))["approval"]
    assert found["status"] == "mismatch"
    assert any(p.startswith("reason is still the placeholder (starts with TODO)") for p in found["problems"])

    data = yaml.safe_load(template)
    data["reason"] = "workloadRef is unused here; CRDs applied by the krc-prod-eks-gpu-crds app first"
    approval.write_text(yaml.safe_dump(data))
    report = diff_json(accepted)
    assert gate(report)["approval"]["status"] == "approved" and report["crdGatesUnapproved"] == []
    assert "Breaking CRD upgrade approved by approvals/prod-eks-gpu.crd-upgrade.yaml" in run(accepted, "diff").output

    data["crds"]["rayjobs.ray.io"] = "0" * 64  # approving other CRDs than the ones rendered
    approval.write_text(yaml.safe_dump(data))
    found = gate(diff_json(accepted))["approval"]
    assert found["status"] == "mismatch"
    assert found["problems"] == [f"crds.rayjobs.ray.io is '{'0' * 64}', the new chart's CRD has sha256 "
                                 f"{yaml.safe_load(template)['crds']['rayjobs.ray.io']}"]


def test_1_5_2_to_1_6_2_reports_raycronjob_as_a_crd_helm_will_not_install(accepted: Project):
    # golden as it was on 1.5.2: no RayCronJob (gate or object) and no preRunningDeadlineSeconds, which 1.5.2 lacks
    path = accepted.environment_file(PROD)
    current = path.read_text()
    older = current.replace("version: 1.6.2", "version: 1.5.2").replace("    preRunningDeadlineSeconds: 1800\n", "")
    older = older.replace("    RayCronJob: true ", "    # RayCronJob: true ")
    path.write_text(older[:older.index("cronJobs:")])
    golden = run(accepted, "golden", PROD)
    assert golden.exit_code == 0, golden.output
    path.write_text(current)
    result = run(accepted, "diff", PROD)
    assert result.exit_code == 1
    assert ("`helm upgrade` will NOT install the CRDs new in 1.6.2: raycronjobs.ray.io (RayCronJob); objects of "
            "those kinds are rejected until the CRDs are applied.") in result.output
    assert "   added     raycronjobs.ray.io (RayCronJob)" in result.output
    found = gate(diff_json(accepted, PROD))
    assert {c["name"]: c["status"] for c in found["crds"]} == {
        "rayclusters.ray.io": "changed", "raycronjobs.ray.io": "added", "rayjobs.ray.io": "changed",
        "rayservices.ray.io": "changed"}
    # additive CRDs, but a new RayJob field the 1.5.2 CRDs prune: deploying before the CRDs loses it silently,
    # so the rollout order needs an approval like a breaking change
    assert found["counts"]["breaking"] == 0
    assert found["blocking"] == ["1 field of new objects pruned by the old CRDs until the new CRDs are applied"]
    assert found["approval"]["status"] == "missing"
    # rendered objects under the old (1.5.2) CRDs: the RayCronJob is rejected, a new RayJob field is pruned
    old = {(f["object"], f["path"], f["pruned"]) for f in found["renderedUnderOldCrds"]}
    assert ("RayJob ray-prod/train-resnet", "spec.preRunningDeadlineSeconds", True) in old
    assert any(obj == "RayCronJob ray-prod/nightly-eval" and not pruned for obj, _, pruned in old)
    [pruned] = [f for f in found["renderedUnderOldCrds"] if f["pruned"]]
    assert pruned["message"] == ("the kuberay-operator 1.5.2 CRDs lack this field, so the API server drops it "
                                 "silently until the new CRDs are applied: apply the new CRDs (server-side) before "
                                 "deploying these objects")
    assert "check the field name" not in result.output
    assert ("field spec.preRunningDeadlineSeconds of RayJob ray-prod/train-resnet would be PRUNED silently: the "
            "kuberay-operator 1.5.2 CRDs lack this field") in result.output
    assert "NOT APPROVED (1 field of new objects pruned by the old CRDs until the new CRDs are applied)" \
        in result.output


def test_golden_objects_are_checked_against_the_new_crds(accepted: Project):
    # a field 1.6.2 has and 1.7.0 removes (workloadRef), set on the live (golden) object
    golden = accepted.golden_dir / PROD / "manifests" / "raycluster-ray-gpu-train.yaml"
    edit(golden, "      spec:\n        containers:\n", "      spec:\n        workloadRef: {name: w, podGroup: g}\n"
         "        containers:\n")
    set_chart_version(accepted, PROD, "1.6.2", "1.7.0")
    found = gate(diff_json(accepted, PROD))
    [finding] = found["goldenUnderNewCrds"]
    assert finding["object"] == "RayCluster ray-prod/ray-gpu-train"
    assert finding["path"] == "spec.headGroupSpec.template.spec.workloadRef" and finding["severity"] == "error"
    assert "1 golden objects invalid under the new CRDs" in found["blocking"]


def test_a_chart_bump_with_identical_crds_is_no_gate(accepted: Project):
    lock = accepted.golden_dir / "dev" / "crds.lock.yaml"
    edit(lock, "version: 1.7.0", "version: 1.7.0-rc.0")
    report = diff_json(accepted, "dev")
    env = report["environments"][0]
    assert env["crdGate"] is None and [f["path"] for f in env["files"]] == ["crds.lock.yaml"]
    assert report["changed"] is True


def test_unavailable_old_crds_are_reported_as_not_compared_in_every_format(accepted: Project, monkeypatch):
    # the 1.6.2 chart is not vendored and no repository is reachable: nothing may claim "no changes"/"all valid"
    (accepted.root / "vendor" / "charts" / "kuberay-operator-1.6.2.tgz").unlink()
    monkeypatch.setenv("KRC_CHART_REPOSITORY", (accepted.root / "no-repository").as_uri())
    set_chart_version(accepted, PROD, "1.6.2", "1.7.0")
    unavailable = ("the old CRDs (kuberay-operator 1.6.2) are unavailable; run krc vendor with that version pinned "
                   "or set KRC_CHART_REPOSITORY")
    text = run(accepted, "diff", PROD)
    assert text.exit_code == 1, text.output
    assert f"   crd-diff kuberay-operator 1.6.2 -> 1.7.0: not compared: {unavailable}\n" in text.output
    assert ("   New objects under the old CRDs (live until the CRDs are applied): not checked: "
            f"{unavailable}\n") in text.output
    assert "no CRD changes" not in text.output and "live until the CRDs are applied): all valid" not in text.output
    assert "NOT APPROVED (the CRD comparison is incomplete)" in text.output

    body = run(accepted, "diff", PROD, "--format", "markdown").output
    assert f"**crd-diff 1.6.2 → 1.7.0: not compared: {unavailable}**" in body
    assert f"- New objects under the old CRDs (live until the CRDs are applied): **not checked**: {unavailable}" in body
    assert "no CRD changes" not in body and "applied): all valid" not in body

    found = gate(diff_json(accepted, PROD))
    assert found["oldCrds"] == {"status": "unavailable", "reason": unavailable}
    assert found["counts"] is None and found["breaking"] is None and found["renderedUnderOldCrds"] is None
    assert found["blocking"] == ["the CRD comparison is incomplete"] and found["approval"]["status"] == "missing"
    assert any("are not available" in note for note in found["notes"])


def test_compared_gates_say_so_in_json(accepted: Project):
    set_chart_version(accepted, PROD, "1.6.2", "1.7.0")
    found = gate(diff_json(accepted, PROD))
    assert found["oldCrds"] == {"status": "compared", "reason": None} and found["renderedUnderOldCrds"] == []
