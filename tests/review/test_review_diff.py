"""`krc diff` against the working tree's golden/: object changes, labels, capacity, exit codes, determinism."""
from __future__ import annotations

import json

import pytest
from review_support import diff_json, edit, run

from compiler.project.paths import Project

PROD = "prod-eks-gpu"
SUMMARIZER = "RayService ray-prod/summarizer"


def objects(report: dict, environment: str) -> dict[str, dict]:
    env = next(e for e in report["environments"] if e["name"] == environment)
    return {o["ref"]: o for o in env["objects"]}


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_no_change_exits_0_and_says_so(accepted: Project):
    result = run(accepted, "diff")
    assert result.exit_code == 0, result.output
    assert "== dev: no change" in result.output and "0 of 2 environments changed" in result.output
    report = diff_json(accepted)
    assert report["changed"] is False and report["format"] == "krc-diff/1"
    assert all(e["objects"] == [] and e["crdGate"] is None for e in report["environments"])


def test_inserting_a_worker_group_shows_that_group_and_the_capacity(accepted: Project):
    edit(accepted.environment_file(PROD), "      - name: gpu-a10g\n        minReplicas: 0\n        maxReplicas: 8\n",
         "      - name: gpu-small\n        minReplicas: 0\n        maxReplicas: 3\n"
         "        cpu: 2\n        memory: 8Gi\n"
         "        gpu: 1\n      - name: gpu-a10g\n        minReplicas: 0\n        maxReplicas: 8\n")
    result = run(accepted, "diff", PROD)
    assert result.exit_code == 1
    report = diff_json(accepted, PROD)
    [changed] = objects(report, PROD).values()
    assert changed["ref"] == "RayCluster ray-prod/ray-gpu-train" and changed["status"] == "changed"
    assert [(f["path"], f["op"]) for f in changed["fields"]] == [
        ("spec.workerGroupSpecs[groupName=gpu-small]", "added")]
    assert [label["code"] for label in changed["labels"]] == ["worker-group-added"]
    capacity = report["environments"][0]["capacity"]
    # three more Pods of 2 CPU, 1 GPU, 8Gi at max scale
    assert (capacity["before"]["cpu"], capacity["after"]["cpu"]) == ("285", "291")
    assert (capacity["before"]["gpu"], capacity["after"]["gpu"]) == (23, 26)
    assert (capacity["before"]["memory"], capacity["after"]["memory"]) == ("1148Gi", "1172Gi")
    assert ("capacity at max scale: CPU 285 -> 291, GPU 23 -> 26 / 32 ✓ (policy/prod-gpu-limit), memory 1148Gi -> "
            "1172Gi") in result.output


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_serve_config_change_is_an_in_place_update_with_a_text_diff(accepted: Project):
    edit(accepted.environment_file(PROD), "route_prefix: /summarize", "route_prefix: /summarise")
    report = diff_json(accepted, PROD)
    service = objects(report, PROD)[SUMMARIZER]
    [field] = service["fields"]
    assert field["path"] == "spec.serveConfigV2" and field["op"] == "text"
    assert "-  route_prefix: /summarize" in field["diff"] and "+  route_prefix: /summarise" in field["diff"]
    assert [label["code"] for label in service["labels"]] == ["rayservice-serve-in-place"]
    assert report["environments"][0]["capacity"]["upgradePeak"] is None
    text = run(accepted, "diff", PROD).output
    assert "    spec.serveConfigV2: (text)\n" in text and "      +  route_prefix: /summarise\n" in text


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_cluster_config_change_creates_a_new_cluster_and_doubles_its_capacity(accepted: Project):
    # the RayService's worker group: 7 CPU -> 8 CPU (first 'cpu: 7' of the file belongs to ray-gpu-train)
    path = accepted.environment_file(PROD)
    text = path.read_text()
    start = text.index("services:")
    path.write_text(text[:start] + text[start:].replace("cpu: 7", "cpu: 8", 1))
    report = diff_json(accepted, PROD)
    service = objects(report, PROD)[SUMMARIZER]
    codes = [label["code"] for label in service["labels"]]
    assert codes == ["rayservice-new-cluster", "worker-pod-template", "pods"]  # pods: KubeRay's builders (issue 32)
    assert "incremental upgrade" in service["labels"][0]["message"]
    worker = "spec.rayClusterConfig.workerGroupSpecs[groupName=gpu-a10g].template.spec.containers[name=ray-worker]"
    assert {f["path"] for f in service["fields"]} == {f"{worker}.resources.limits.cpu",
                                                      f"{worker}.resources.requests.cpu"}
    capacity = report["environments"][0]["capacity"]
    assert capacity["after"]["cpu"] == "289"  # 4 workers at max scale, one CPU more each
    assert capacity["upgradePeak"]["cpu"] == "325"  # plus the new cluster: head 4 + 4 x 8
    assert capacity["upgradePeak"]["gpu"] == 27


def edit_service(project: Project, old: str, new: str) -> None:
    """Replace the first `old` after `services:` (the RayService's part of the environment file)."""
    path = project.environment_file(PROD)
    text = path.read_text()
    start = text.index("services:")
    assert old in text[start:], old
    path.write_text(text[:start] + text[start:].replace(old, new, 1))


SERVICE_GROUP = "        - name: gpu-a10g\n          minReplicas: 1\n          maxReplicas: 4\n"
NEW_GROUP = ("        - name: cpu-pre\n          minReplicas: 0\n          maxReplicas: 2\n          cpu: 4\n"
             "          memory: 16Gi\n")


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_changing_max_replicas_of_a_rayservice_group_is_no_new_cluster(accepted: Project):
    # KubeRay leaves replicas/minReplicas/maxReplicas out of its cluster hash: no new cluster, no peak
    edit_service(accepted, "maxReplicas: 4", "maxReplicas: 6")
    report = diff_json(accepted, PROD)
    service = objects(report, PROD)[SUMMARIZER]
    assert [f["path"] for f in service["fields"]] == [
        "spec.rayClusterConfig.workerGroupSpecs[groupName=gpu-a10g].maxReplicas"]
    assert [label["code"] for label in service["labels"]] == ["rayservice-scale"]
    assert "does not update the running RayCluster" in service["labels"][0]["message"]
    capacity = report["environments"][0]["capacity"]
    assert capacity["upgradePeak"] is None and capacity["after"]["gpu"] == capacity["before"]["gpu"] + 2
    text = run(accepted, "diff", PROD).output
    assert "    [scale] only worker replicas" in text and "[replacement]" not in text
    assert "during the RayService upgrade" not in text
    assert "(peak " not in run(accepted, "diff", PROD, "--format", "markdown").output


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_appending_a_worker_group_updates_the_running_cluster_in_place(accepted: Project):
    # after the last group (followed by jobs:), with the existing group's maxReplicas changed too
    path = accepted.environment_file(PROD)
    edit_service(accepted, "maxReplicas: 4", "maxReplicas: 5")
    edit(path, "            node.kubernetes.io/instance-type: g5.2xlarge\njobs:",
         "            node.kubernetes.io/instance-type: g5.2xlarge\n" + NEW_GROUP + "jobs:")
    report = diff_json(accepted, PROD)
    service = objects(report, PROD)[SUMMARIZER]
    assert [label["code"] for label in service["labels"]] == ["rayservice-groups-appended", "worker-group-added"]
    assert "(cpu-pre)" in service["labels"][0]["message"] and "in place" in service["labels"][0]["message"]
    capacity = report["environments"][0]["capacity"]
    assert capacity["upgradePeak"] is None
    assert (capacity["before"]["cpu"], capacity["after"]["cpu"]) == ("285", "300")  # + 7 + 2 x 4
    assert "during the RayService upgrade" not in run(accepted, "diff", PROD).output


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_inserting_a_worker_group_before_others_is_a_new_cluster(accepted: Project):
    edit_service(accepted, SERVICE_GROUP, NEW_GROUP + SERVICE_GROUP)
    report = diff_json(accepted, PROD)
    service = objects(report, PROD)[SUMMARIZER]
    assert [label["code"] for label in service["labels"]] == ["rayservice-new-cluster", "worker-group-added"]
    assert report["environments"][0]["capacity"]["upgradePeak"] is not None


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_deleted_objects_are_labelled(accepted: Project):
    path = accepted.environment_file(PROD)
    text = path.read_text()
    path.write_text(text[:text.index("cronJobs:")])
    report = diff_json(accepted, PROD)
    removed = objects(report, PROD)["RayCronJob ray-prod/nightly-eval"]
    assert removed["status"] == "removed" and removed["object"]["kind"] == "RayCronJob"
    assert removed["labels"][0]["code"] == "deleted" and "no further RayJobs" in removed["labels"][0]["message"]
    assert report["environments"][0]["counts"]["removed"] == 1


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_an_api_version_change_is_a_field_change_not_delete_and_add(accepted: Project):
    golden = accepted.golden_dir / "dev" / "manifests" / "raycluster-ray-cpu-demo.yaml"
    edit(golden, "apiVersion: ray.io/v1\n", "apiVersion: ray.io/v1alpha1\n")
    report = diff_json(accepted, "dev")
    [obj] = objects(report, "dev").values()
    assert obj["status"] == "changed" and obj["apiVersion"] == {"old": "ray.io/v1alpha1", "new": "ray.io/v1"}
    assert obj["fields"] == [{"path": "apiVersion", "where": ["apiVersion"], "op": "changed", "old": "ray.io/v1alpha1",
                              "new": "ray.io/v1"}]
    assert obj["labels"][0]["code"] == "api-version"


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_helm_values_are_a_unified_diff(accepted: Project):
    edit(accepted.environment_file(PROD), "limits: {cpu: 500m, memory: 1Gi}", "limits: {cpu: 750m, memory: 1Gi}")
    report = diff_json(accepted, PROD)
    [values] = report["environments"][0]["files"]
    assert values["path"] == "helm/kuberay-operator.values.yaml" and values["labels"][0]["code"] == "operator-values"
    assert "-    cpu: 500m" in values["diff"] and "+    cpu: 750m" in values["diff"]


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_every_format_is_byte_identical_across_runs(accepted: Project):
    edit(accepted.environment_file(PROD), "route_prefix: /summarize", "route_prefix: /s")
    edit(accepted.environment_file("dev"), "maxReplicas: 2", "maxReplicas: 5")
    for output_format in ("text", "markdown", "json"):
        first = run(accepted, "diff", "--format", output_format)
        second = run(accepted, "diff", "--format", output_format)
        assert first.exit_code == second.exit_code == 1
        assert first.output == second.output
    assert json.loads(first.output)["environments"][0]["name"] == "dev"


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_bad_input_exits_2(accepted: Project):
    assert run(accepted, "diff", "staging").exit_code == 2
    (accepted.golden_dir / "dev" / "manifests" / "broken.yaml").write_text("kind: [\n")
    result = run(accepted, "diff", "dev")
    assert result.exit_code == 2 and "golden/dev/manifests/broken.yaml" in result.output
