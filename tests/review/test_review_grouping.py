"""Grouped and ranked: the same change in many places is said once, consequences come worst first in plain
words, and a Ray version change on a running cluster says what KubeRay and Ray do and what to do instead."""
from __future__ import annotations

import json

import pytest
from review_support import commit_project, edit, report_env, run

from compiler.project.paths import Project

# not about policies: no CUE engine run (the checks policies add are test_review_checks.py's subject)
pytestmark = pytest.mark.usefixtures("project_without_policies")

PROD = "prod-eks-gpu"
OLD, NEW = "rayproject/ray:2.58.0-py312", "rayproject/ray:2.59.0-py312"


def test_a_ray_bump_is_grouped_ranked_and_explained(accepted: Project):
    commit_project(accepted, "golden")
    text = accepted.environment_file("base").read_text().replace("2.58.0", "2.59.0")
    accepted.environment_file("base").write_text(text)
    assert run(accepted, "golden").exit_code == 0
    commit_project(accepted, "Ray 2.59.0")

    report = json.loads(run(accepted, "diff", "--base", "HEAD~1", "--format", "json").output)
    prod = report_env(report, PROD)
    groups = {(g["field"], g["new"]): g for g in prod["groups"]}
    # RayCluster (head, cpu, 2 GPU groups), RayService, RayJob and RayCronJob (head + 1 GPU group each)
    cpu_image, gpu_image = groups[("image", NEW)], groups[("image", NEW + "-gpu")]
    assert (cpu_image["objects"], cpu_image["occurrences"], cpu_image["unit"]) == (4, 5, "containers")
    assert (gpu_image["objects"], gpu_image["occurrences"]) == (4, 5) and cpu_image["old"] == OLD
    assert (groups[("rayVersion", "2.59.0")]["objects"], groups[("rayVersion", "2.59.0")]["occurrences"]) == (4, 4)
    dev = report_env(report, "dev")
    assert [(g["field"], g["objects"], g["occurrences"]) for g in dev["groups"]] == [("image", 1, 2)]

    objects = prod["objects"]
    # ranked: the running RayCluster (outage) before the RayService (a new cluster) before the jobs (later runs)
    assert [o["ref"] for o in objects][:2] == ["RayCluster ray-prod/ray-gpu-train", "RayService ray-prod/summarizer"]
    cluster, service = objects[0], objects[1]
    assert cluster["labels"][0]["code"] == "ray-version-running-cluster" and cluster["labels"][0]["impact"] == "outage"
    assert "fail to join it" in cluster["labels"][0]["message"]
    assert "Instead: set spec.upgradeStrategy.type Recreate" in cluster["labels"][0]["message"]
    assert {label["code"] for label in service["labels"]} >= {"rayservice-new-cluster", "ray-version-new-cluster"}
    assert all(label["impact"] == "replacement" for label in service["labels"])

    shown = run(accepted, "diff", "--base", "HEAD~1").output
    assert f'     image "{OLD}" -> "{NEW}" in 4 objects (5 containers)\n' in shown
    assert '     rayVersion "2.58.0" -> "2.59.0" in 4 objects (4 places)\n' in shown
    assert "    [outage] Ray 2.58.0 -> 2.59.0 on a running RayCluster: KubeRay leaves the running head" in shown
    assert shown.count(f'"{OLD}" -> "{NEW}"') == 2  # once per environment's group, not once per container
    assert "    (5 more changes: in the groups above)\n" in shown

    body = run(accepted, "diff", "--base", "HEAD~1", "--format", "markdown").output
    assert f'- image "{OLD}" -> "{NEW}" in 4 objects (5 containers)' in body
    assert "| `prod-eks-gpu` | 0 | 0 | 4 |" in body and "| **outage** ×1, replacement ×5, metadata only ×9 |" in body
    assert "- **outage**: Ray 2.58.0 -> 2.59.0 on a running RayCluster" in body
    assert body.count(f"`{NEW}`") == 0  # no per-container rows for grouped changes


def test_a_recreate_cluster_restarts_together(accepted: Project):
    edit(accepted.environment_file("dev"), "  - name: ray-cpu-demo\n",
         "  - name: ray-cpu-demo\n    raw:\n      upgradeStrategy: {type: Recreate}\n")
    assert run(accepted, "golden", "dev").exit_code == 0
    edit(accepted.environment_file("base"), "image: rayproject/ray:2.58.0-py312\n",
         "image: rayproject/ray:2.58.0-py311\n")
    report = json.loads(run(accepted, "diff", "dev", "--format", "json").output)
    [cluster] = report_env(report, "dev")["objects"]
    assert cluster["labels"][0]["code"] == "ray-image-recreate" and cluster["labels"][0]["impact"] == "restart"
    assert "recreates every Pod of the cluster at once" in cluster["labels"][0]["message"]
