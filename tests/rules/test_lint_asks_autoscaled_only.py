"""`krc lint` asks Ray's generator only about the clusters an autoscaler reads (`enableInTreeAutoscaling: true`):
the rules that read Ray's view find the same with those answers as with answers for every cluster (what `krc
autoscaler` and the review still ask for), over every autoscaler/ rule case, the fixture project's environments and
synthetic ones; and a lint sends the generator no other cluster."""
from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from project_support import REPO_ROOT
from test_rule_cases import _all_cases, context_for

from compiler import autoscaler
from compiler.autoscaler import Batch, GeneratedConfig, Generator, autoscaler_views
from compiler.k8s.ray_cluster_specs import autoscaled, cluster_specs
from compiler.lint.runner import VIEW_RULES, run_rules, validate_objects
from compiler.pipeline import RunOptions
from compiler.pipeline.autoscaling import autoscaler_of
from compiler.pipeline.environments import compile_environment, project_destinations, validate_render
from compiler.pipeline.linting import policy_and_lint
from compiler.project.paths import Project
from compiler.rules.support.autoscaler_view import AutoscalerView
from compiler.rules.support.context import LintContext

SYNTHETIC_ENVIRONMENTS = 6


def _specs(documents: tuple[dict[str, Any], ...]) -> tuple[set[tuple[str, ...]], set[tuple[str, ...]]]:
    """(kind/name, path) of the documents' autoscaled cluster specs, and of the others."""
    scaled, others = set(), set()
    for document in documents:
        for path, spec in cluster_specs(document):
            (scaled if autoscaled(spec) else others).add((str(document.get("kind")), *path))
    return scaled, others


def _asked(view: AutoscalerView) -> set[tuple[str, ...]]:
    return {(ref.split("/")[0], *path) for ref, path in view.configs}


def _same_view_findings(context: LintContext, every: AutoscalerView, scaled_only: AutoscalerView) -> int:
    """The view rules' findings with either view are the same; how many there were."""
    found = run_rules(dataclasses.replace(context, autoscaler=every), VIEW_RULES)
    assert run_rules(dataclasses.replace(context, autoscaler=scaled_only), VIEW_RULES) == found
    return len(found)


@pytest.mark.parametrize(("rule_id", "case", "file_name"),
                         [p for p in _all_cases() if str(p.values[0]).startswith("autoscaler/")])
def test_every_autoscaler_rule_case_finds_the_same(rule_id: str, case: dict, file_name: str, tmp_path: Path) -> None:
    manifest = tmp_path / file_name
    manifest.write_text(case.get("manifests") or "", encoding="utf-8")
    stored, _ = validate_objects(context_for(case, manifest))
    batch = Batch(str(case.get("rayVersion", "2.58.0")), tuple(o.document for o in stored.objects))
    [every] = autoscaler_views(REPO_ROOT, [batch])
    [scaled_only] = autoscaler_views(REPO_ROOT, [batch], autoscaled_only=True)
    scaled, others = _specs(batch.documents)
    assert _asked(every) == scaled | others and _asked(scaled_only) == scaled
    _same_view_findings(stored, every, scaled_only)


def _environments_find_the_same(project: Project) -> tuple[int, int, int]:
    """(findings, clusters asked about for every cluster, for the autoscaled ones) over the project's
    environments."""
    peers = project_destinations(project)
    validated = [validate_render(compile_environment(project, name), peers) for name in project.environment_names()]
    everys, scaled_onlys = autoscaler_of(project, validated), autoscaler_of(project, validated, autoscaled_only=True)
    findings = 0
    for entry, every, scaled_only in zip(validated, everys, scaled_onlys, strict=True):
        assert not every.unavailable, every.unavailable
        scaled, _ = _specs(tuple(o.document for o in entry.context.objects))
        assert _asked(scaled_only) == scaled
        findings += _same_view_findings(entry.context, every, scaled_only)
    return findings, sum(len(v.configs) for v in everys), sum(len(v.configs) for v in scaled_onlys)


def test_the_fixture_projects_environments_find_the_same(project: Project) -> None:
    dev = project.environment_file("dev")
    assert "      idleTimeoutSeconds: 60\n" in dev.read_text()
    dev.write_text(dev.read_text().replace("      idleTimeoutSeconds: 60\n", ""))  # the autoscaler's default
    findings, _, scaled = _environments_find_the_same(project)
    assert findings > 0 and scaled > 0


def test_synthetic_environments_find_the_same_asking_about_half_the_clusters(
        tmp_path: Path, vendor_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(REPO_ROOT / "bench"))
    monkeypatch.delitem(sys.modules, "synthetic", raising=False)
    import synthetic

    project = Project(synthetic.build_project(tmp_path / "project", SYNTHETIC_ENVIRONMENTS, vendor_cache))
    _, every, scaled = _environments_find_the_same(project)
    # each environment: a RayCluster and a RayService autoscaled, a RayJob and a RayCronJob not
    assert (every, scaled) == (4 * SYNTHETIC_ENVIRONMENTS, 2 * SYNTHETIC_ENVIRONMENTS)


def test_a_lint_asks_the_generator_about_autoscaled_clusters_only(project: Project, private_cache: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[dict[str, Any]] = []
    real = autoscaler.generate

    def recorded(generator: Generator, clusters: Mapping[str, dict[str, Any]]) -> dict[str, GeneratedConfig]:
        asked.extend(clusters.values())
        return real(generator, clusters)

    monkeypatch.setattr(autoscaler, "generate", recorded)
    policy_and_lint(project, project.environment_names(), RunOptions(cache=True, workers=1), None,
                    with_findings=True)
    assert asked and all(autoscaled(cluster["spec"]) for cluster in asked)
