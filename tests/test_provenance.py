"""Findings on rendered objects point at the environment line that produced the field."""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from copy import deepcopy
from typing import Any

import pytest

from compiler import pipeline
from compiler.diagnostics.fieldpath import is_named_list, item_name
from compiler.diagnostics.problems import KrcError
from compiler.project.paths import Project
from compiler.render.provenance import environment_path, object_positions
from compiler.render.templates import SOURCE_ANNOTATION, prepare_templates, render_environment


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


# ---- provenance checked by experiment ---------------------------------------------------------------------------
# provenance.py maps rendered fields back to environment keys by hand, mirroring the templates. This proves the
# mapping against the templates themselves: change one environment value, render again, and every rendered field
# that changed must point (through the mapping and the nearest key the environment sets) at that key or one of
# its parents, never at another key: a template change that moves a field without updating the mapping fails
# here instead of sending findings to the wrong line.

ITEM_LISTS = ("clusters", "services", "jobs", "cronJobs")


def _scalar_leaves(value: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _scalar_leaves(child, path + (key,))
    elif isinstance(value, list) and is_named_list(value):
        for item in value:
            yield from _scalar_leaves(item, path + (item_name(item),))
    elif isinstance(value, (bool, int, str)) and not isinstance(value, list):
        yield path, value


def _mutated(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    return f"{value}x"


def _set(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    copy = deepcopy(data)
    node = copy
    for step in path[:-1]:
        node = next(i for i in node if item_name(i) == step) if isinstance(node, list) else node[step]
    node[path[-1]] = value
    return copy


def _changed_leaves(before: Any, after: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before.keys() | after.keys():
            yield from _changed_leaves(before.get(key), after.get(key), path + (key,))
    elif isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for i, (old, new) in enumerate(zip(before, after, strict=True)):
            yield from _changed_leaves(old, new, path + (i,))
    elif before != after:
        yield path


@pytest.mark.parametrize("name", ["dev", "prod-eks-gpu"])
def test_every_changed_field_maps_back_to_the_key_that_changed_it(project: Project, name: str) -> None:
    render = pipeline.compile_environment(project, name)
    env = render.environment
    sources = {o.document["metadata"]["annotations"].get(SOURCE_ANNOTATION): o for o in render.objects
               if SOURCE_ANNOTATION in (o.document["metadata"].get("annotations") or {})}
    experiments = []
    for key, value in _scalar_leaves({k: env.data[k] for k in ITEM_LISTS if k in env.data}, ()):
        if key[-1] == "name" or "raw" in key:  # names identify items (and objects); raw is KubeRay's own shape
            continue
        obj = sources.get(".".join(map(str, key[:2])))
        if obj is not None:
            experiments.append((key, obj, dataclasses.replace(env, data=_set(env.data, key, _mutated(value)))))
    # every changed environment's Jsonnet evaluated in one run, as `krc render` does for many environments
    # (tests/test_render_together.py: the same objects as one run each); a refused value falls back to its own run
    prepared = prepare_templates(project, [(changed_env, render.chart) for _, _, changed_env in experiments])
    checked = 0
    for (key, obj, changed_env), mine in zip(experiments, prepared, strict=True):
        try:
            again = render_environment(project, changed_env, render.chart, mine)
        except KrcError:
            continue  # a value the templates refuse (e.g. an unknown upgrade type): nothing rendered to compare
        new = next(o for o in again.objects if o.ref == obj.ref)
        for field in _changed_leaves(obj.document, new.document):
            if field[:3] == ("metadata", "annotations", SOURCE_ANNOTATION):
                continue
            mapped = key[:2] + environment_path(obj.document, field)
            # a finding on the field points at the nearest key of `mapped` the environment sets
            located = next(mapped[:n] for n in range(len(mapped), -1, -1) if env.chain_of(mapped[:n]))
            assert key[:len(located)] == located, (
                f"{name}: changing {'.'.join(map(str, key))} changed {'.'.join(map(str, field))} of {obj.ref}, "
                f"whose findings would point at {'.'.join(map(str, located))}")
            checked += 1
    assert checked >= 10  # the experiment really compared fields
