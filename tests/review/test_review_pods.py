"""`krc diff` says what a change does to the Pods KubeRay creates (issue 32, item 2): KubeRay's own builders
(the engine/kuberay v1.6.2 build) on the object in golden/ and as rendered, compared group by group, under the
object that causes it, in every format."""
from __future__ import annotations

import json

from review_support import edit, report_env, run

from compiler.project.paths import Project

PROD = "prod-eks-gpu"  # pins chart 1.6.2
HEAD = "rayStartParams: {num-cpus: '0'}"
CPU_GROUP = "      - name: cpu\n        minReplicas: 0\n        maxReplicas: 10\n        cpu: 8\n        memory: 32Gi\n"


def test_diff_names_the_pod_changes_under_the_object_that_causes_them(accepted: Project):
    edit(accepted.environment_file(PROD), HEAD, "rayStartParams: {num-cpus: '0', num-gpus: '1'}")
    edit(accepted.environment_file(PROD), CPU_GROUP, CPU_GROUP.replace("32Gi", "40Gi"))
    report = json.loads(run(accepted, "diff", "--format", "json").output)
    objects = {o["ref"]: o for o in report_env(report, PROD)["objects"]}
    cluster = next(o for key, o in objects.items() if "ray-gpu-train" in key and "RayCluster" in key)
    pods = [label for label in cluster["labels"] if label["code"] == "pods"]
    assert [(p["message"], p["impact"]) for p in pods] == [(
        "the head Pod: ray start gains --num-gpus=1; worker group 'cpu' Pods: ray start --memory=34359738368 -> "
        "--memory=42949672960; its Pod changes at spec.containers[name=ray-worker].resources.limits.memory, "
        "spec.containers[name=ray-worker].resources.requests.memory, spec.volumes[name=shared-mem].emptyDir.sizeLimit "
        "(only Pods created from now on get it: KubeRay replaces no running Pod of a RayCluster)", "metadata only")]
    text = run(accepted, "diff").output
    assert "    [metadata only] the head Pod: ray start gains --num-gpus=1; worker group 'cpu' Pods:" in text
    markdown = run(accepted, "diff", "--format", "markdown").output
    assert "ray start gains --num-gpus=1" in markdown


def test_no_pod_lines_without_a_build_of_the_pinned_version(accepted: Project):
    edit(accepted.environment_file("dev"), "maxReplicas: 2", "maxReplicas: 3")  # dev pins 1.7.0: no build
    report = json.loads(run(accepted, "diff", "--format", "json").output)
    dev = report_env(report, "dev")
    assert dev["objects"] and all(label["code"] != "pods" for o in dev["objects"] for label in o["labels"])
