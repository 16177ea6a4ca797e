"""Findings on rendered objects point at the environment line that produced the field."""
from __future__ import annotations

from compiler import pipeline
from compiler.project import Project
from compiler.provenance import environment_path, object_positions


def line_of(project: Project, env: str, text: str, after: str = "") -> int:
    lines = project.environment_file(env).read_text().splitlines()
    start = lines.index(after) if after else 0
    return lines.index(text, start) + 1


def test_field_paths_map_to_environment_keys():
    doc = {"kind": "RayService", "spec": {"rayClusterConfig": {"workerGroupSpecs": [{"groupName": "gpu"}]}}}
    assert environment_path(doc, ("spec", "rayClusterConfig", "workerGroupSpecs", 0, "template", "spec",
                                  "containers", 0, "resources", "limits", "nvidia.com/gpu")) == (
        "cluster", "workerGroups", "gpu", "gpu")
    assert environment_path(doc, ("spec", "upgradeStrategy", "clusterUpgradeOptions", "stepSizePercent")) == (
        "upgrade", "stepSizePercent")
    assert environment_path(doc, ("spec", "serveConfigV2")) == ("serveConfig",)
    cron = {"kind": "RayCronJob", "spec": {"jobTemplate": {"rayClusterSpec": {"headGroupSpec": {}}}}}
    assert environment_path(cron, ("spec", "jobTemplate", "rayClusterSpec", "headGroupSpec", "rayStartParams")) == (
        "job", "cluster", "head", "rayStartParams")


def test_positions_of_a_rendered_gpu_group(project: Project):
    render = pipeline.compile_environment(project, "prod-eks-gpu")
    cluster = next(o for o in render.objects if o.document["kind"] == "RayCluster")
    positions = object_positions(cluster.document, render.environment.location_of)
    groups = cluster.document["spec"]["workerGroupSpecs"]
    index = next(i for i, g in enumerate(groups) if g["groupName"] == "gpu-a10g")
    gpu = positions[("spec", "workerGroupSpecs", index, "template", "spec", "containers", 0, "resources",
                     "limits", "nvidia.com/gpu")]
    assert gpu.file == "environments/prod-eks-gpu.yaml"
    assert gpu.line == line_of(project, "prod-eks-gpu", "        gpu: 1", after="      - name: gpu-a10g")
    assert positions[()].line == line_of(project, "prod-eks-gpu", "  - name: ray-gpu-train")
