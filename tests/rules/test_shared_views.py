"""What a lint context's rules share (LintContext.derived: its KubeRay objects, their cluster specs, groups and job
specs, each made once per context) changes no finding: every rule finds the same, in the same order, as with views
made afresh for every call, over the fixture project's environments, synthetic ones (bench/synthetic.py) and every
rule case; and a context made from another (dataclasses.replace) never sees the other's views."""
from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from project_support import REPO_ROOT, copy_project
from test_rule_cases import _all_cases, context_for, with_autoscaler

from compiler.diagnostics.problems import Location, Problem
from compiler.lint.runner import rule_applies, run_rules, validate_objects
from compiler.pipeline.autoscaling import autoscaler_of
from compiler.pipeline.environments import compile_environment, project_destinations, validate_render
from compiler.project.paths import Project
from compiler.rules import RULES
from compiler.rules.support.context import LintContext, LintObject
from compiler.rules.support.ray_objects import cluster_groups, cluster_views, job_views

SYNTHETIC_ENVIRONMENTS = 8
T = TypeVar("T")


def _made_afresh(context: LintContext, compute: Callable[[LintContext], T]) -> T:
    """LintContext.derived as if nothing were shared: each call makes its views again, as each did before."""
    return compute(context)


def _findings(context: LintContext) -> list[tuple[str, list[Problem]]]:
    """Every applicable rule's findings, in the order the runner runs the rules and each rule yields them."""
    return [(rule_id, list(rule.check(context))) for rule_id, rule in RULES.items() if rule_applies(rule, context)]


def assert_same_findings(context: LintContext) -> int:
    """The findings with the views the context shares between its rules are those made afresh; likewise in the
    contexts made from it where the rules that read the environment's settings (production, cpuOnly) or run only
    on an environment find other things. How many there were."""
    count = 0
    for change in ({}, {"production": not context.production, "cpu_only": not context.cpu_only}, {"mode": "paths"}):
        variant = dataclasses.replace(context, **change) if change else context
        afresh = dataclasses.replace(variant)  # made before the rules run on the variant: nothing derived yet
        found = _findings(variant)  # its memo filled as the rules run one after another
        unset = dataclasses.replace(variant, rule_settings={})  # run_rules: every rule, at its own severity
        run = run_rules(unset)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(LintContext, "derived", _made_afresh)
            assert _findings(afresh) == found, variant.environment_name
            assert run_rules(dataclasses.replace(afresh, rule_settings={})) == run
        assert _findings(variant) == found  # asked again: the views the first pass left are the same
        count += sum(len(problems) for _, problems in found)
    return count


def _environment_contexts(project: Project) -> list[LintContext]:
    """Each environment's context as the compile lints it, without Ray's view and with it."""
    peers = project_destinations(project)
    validated = [validate_render(compile_environment(project, name), peers) for name in project.environment_names()]
    views = autoscaler_of(project, validated)
    return [c for v, view in zip(validated, views, strict=True)
            for c in (v.context, dataclasses.replace(v.context, autoscaler=view))]


def test_the_fixture_projects_environments_find_the_same(tmp_path: Path, vendor_cache: Path) -> None:
    contexts = _environment_contexts(copy_project(tmp_path / "project", vendor_cache))
    assert len(contexts) == 4  # dev and prod-eks-gpu, each without Ray's view and with it
    assert sum(assert_same_findings(c) for c in contexts) > 0


def test_synthetic_environments_find_the_same(tmp_path: Path, vendor_cache: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(REPO_ROOT / "bench"))
    monkeypatch.delitem(sys.modules, "synthetic", raising=False)
    import synthetic

    project = Project(synthetic.build_project(tmp_path / "project", SYNTHETIC_ENVIRONMENTS, vendor_cache))
    contexts = _environment_contexts(project)
    assert len(contexts) == 2 * SYNTHETIC_ENVIRONMENTS
    assert sum(assert_same_findings(c) for c in contexts) > 0


def _cases_by_rule() -> dict[str, list[tuple[dict[str, Any], str]]]:
    cases: dict[str, list[tuple[dict[str, Any], str]]] = {}
    for param in _all_cases():
        rule_id, case, file_name = param.values
        cases.setdefault(rule_id, []).append((case, file_name))
    return cases


@pytest.mark.parametrize("rule_id", sorted(_cases_by_rule()))
def test_every_rule_case_finds_the_same(rule_id: str, tmp_path: Path) -> None:
    """Each case's objects as written and as stored (with Ray's view for the autoscaler/ cases), under every rule."""
    for case, file_name in _cases_by_rule()[rule_id]:
        manifest = tmp_path / file_name
        manifest.write_text(case.get("manifests") or "", encoding="utf-8")
        written = context_for(case, manifest)
        assert_same_findings(written)
        # made from the context just linted (dataclasses.replace): sees the stored objects, not the written ones
        stored, _ = validate_objects(written)
        assert_same_findings(stored)
        if rule_id.startswith("autoscaler/"):
            assert_same_findings(with_autoscaler(stored, case))


def _cluster(name: str, workers: list[str]) -> LintObject:
    groups = [{"groupName": w, "template": {"spec": {"containers": [{"name": "ray"}]}}} for w in workers]
    return LintObject({"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": name},
                       "spec": {"headGroupSpec": {"template": {"spec": {"containers": [{"name": "ray"}]}}},
                                "workerGroupSpecs": groups}}, Location("c.yaml"))


def test_a_context_made_from_another_has_views_of_its_own_objects() -> None:
    first = LintContext((_cluster("a", ["x"]),), "1.7.0", {})
    assert [c.obj.name for c in cluster_views(first)] == ["a"]
    assert [g.name for _, g in cluster_groups(first, workers_only=True)] == ["x"]
    second = dataclasses.replace(first, objects=(_cluster("b", ["y", "z"]),))
    assert [c.obj.name for c in cluster_views(second)] == ["b"]
    assert [g.name for _, g in cluster_groups(second)] == ["Head", "y", "z"]
    assert [g.name for _, g in cluster_groups(second, workers_only=True)] == ["y", "z"]
    assert list(job_views(second)) == []
    assert [c.obj.name for c in cluster_views(first)] == ["a"]  # the first keeps its own
    # what a context derived is no part of its value
    assert first == dataclasses.replace(first) and "derived" not in repr(first)
