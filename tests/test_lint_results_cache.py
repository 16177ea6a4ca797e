"""Results derived from a compiled environment (policy findings, finished lint results) and the cache keys they
live under: taken from the cache when nothing they depend on changed, never when a layer the environment extends
changed (its own file, which names the compile entry, may keep its bytes)."""
from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Iterable
from pathlib import Path

import pytest
from cache_support import entry_files
from project_support import engine_unavailable

from compiler import pipeline
from compiler.argocd.validation import environment_problems
from compiler.diagnostics.problems import Problem, sorted_problems
from compiler.k8s.destinations import Destination
from compiler.lint import lint_validated
from compiler.pipeline.autoscaling import autoscaler_of
from compiler.pipeline.environments import compile_environment, project_destinations, validate_render
from compiler.pipeline.lint_batch import LINT_RESULTS
from compiler.pipeline.linting import policy_and_lint
from compiler.policy import find_engine
from compiler.policy.engine import CueEngine
from compiler.project.paths import Project
from compiler.render.templates import Render
from compiler.results import compile_cache

REPO_ROOT = Path(__file__).resolve().parents[1]
CACHED = pipeline.RunOptions(cache=True, workers=1)
ALLOWED_IMAGE = "image: rayproject/ray:2.58.0-py312\n"
FOREIGN_IMAGE = "image: registry.example.com/ray:2.58.0-py312\n"


@pytest.fixture
def cache_dir(private_cache: Path) -> Path:
    return private_cache


@pytest.fixture
def engine() -> CueEngine:
    return find_engine()


def rules_of(findings: Iterable[Problem]) -> set[tuple[str, str]]:
    return {(f.object or f.message.split(":")[0], f.rule) for f in findings}


def image_findings(findings: Iterable[Problem]) -> set[str]:
    return {f.message.split(":")[0] for f in findings if f.rule == "policy/image-registry"}


def change_base_image(project: Project) -> None:
    """Only base.yaml names the image: every environment's own file keeps its bytes."""
    base = project.environment_file("base")
    assert ALLOWED_IMAGE in base.read_text()
    base.write_text(base.read_text().replace(ALLOWED_IMAGE, FOREIGN_IMAGE))


def test_lint_and_policy_results_follow_a_changed_base_layer(project: Project, cache_dir: Path, engine: CueEngine):
    names = project.environment_names()
    before = policy_and_lint(project, names, CACHED, None, with_findings=True, engine=engine)
    assert image_findings(before) == set()
    assert image_findings(pipeline.check_policies(project, tuple(names), engine, CACHED).findings) == set()
    assert entry_files(cache_dir, LINT_RESULTS)
    change_base_image(project)
    everyone = {f"environment {name}" for name in names}
    after = policy_and_lint(project, names, CACHED, None, with_findings=True, engine=engine)
    assert image_findings(after) == everyone
    assert rules_of(before) <= rules_of(after)  # what did not change is still found
    assert image_findings(pipeline.check_policies(project, tuple(names), engine, CACHED).findings) == everyone


def test_lint_results_come_from_the_cache_without_compiling_or_the_engine(tmp_path: Path, project: Project,
                                                                         cache_dir: Path, engine: CueEngine,
                                                                         monkeypatch: pytest.MonkeyPatch):
    names = project.environment_names()
    change_base_image(project)  # findings to keep
    first = policy_and_lint(project, names, CACHED, None, with_findings=True, engine=engine)
    assert image_findings(first)
    # without the full compile entries a run that compiled would write them again; with no engine able to start,
    # any run that needs one fails
    shutil.rmtree(cache_dir / compile_cache.COMPILED.name)
    engine_unavailable(monkeypatch, tmp_path)
    assert policy_and_lint(project, names, CACHED, None, with_findings=True, engine=engine) == first
    assert not (cache_dir / compile_cache.COMPILED.name).exists()


def test_lint_and_policy_results_are_kept_apart(project: Project, cache_dir: Path, engine: CueEngine):
    """`krc lint` applies an environment's `lint.rules` settings for policies, `krc policy` does not."""
    names = project.environment_names()
    change_base_image(project)
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text() + "lint:\n  rules:\n    policy/image-registry:\n      severity: warning\n"
                   "      reason: dev tries a registry mirror\n")

    def severities(findings: list[Problem]) -> set[tuple[str, str]]:
        return {(f.message.split(":")[0], f.severity) for f in findings if f.rule == "policy/image-registry"}

    for _ in range(2):  # compiled, then from the cache
        linted = policy_and_lint(project, names, CACHED, None, with_findings=True, engine=engine)
        policies = policy_and_lint(project, names, CACHED, None, with_findings=False, engine=engine, settings=False)
        assert severities(linted) == {("environment dev", "warning"), ("environment prod-eks-gpu", "error")}
        assert severities(policies) == {("environment dev", "error"), ("environment prod-eks-gpu", "error")}


def test_a_damaged_lint_result_is_ignored(project: Project, cache_dir: Path, engine: CueEngine):
    names = project.environment_names()
    change_base_image(project)
    first = policy_and_lint(project, names, CACHED, None, with_findings=True, engine=engine)
    for entry in entry_files(cache_dir, LINT_RESULTS):
        header, _, _ = entry.read_bytes().partition(b"\n")
        entry.write_bytes(header + b"\n[{\"message\": \"believed\"}]")
    assert policy_and_lint(project, names, CACHED, None, with_findings=True, engine=engine) == first


def test_krc_policy_reads_the_policy_findings_lint_kept(tmp_path: Path, project: Project, cache_dir: Path,
                                                          engine: CueEngine, monkeypatch: pytest.MonkeyPatch):
    """After `krc lint`, `krc policy` needs neither the full entries nor the engine: each environment's summary
    names its policy findings."""
    names = tuple(project.environment_names())
    change_base_image(project)
    policy_and_lint(project, names, CACHED, None, with_findings=True, engine=engine)
    shutil.rmtree(cache_dir / compile_cache.COMPILED.name)
    shutil.rmtree(cache_dir / LINT_RESULTS.name)
    engine_unavailable(monkeypatch, tmp_path)
    found = pipeline.check_policies(project, names, engine, CACHED).findings
    assert image_findings(found) == {f"environment {name}" for name in names}
    assert not (cache_dir / compile_cache.COMPILED.name).exists()
    monkeypatch.delenv("KRC_ENGINE")
    assert found == pipeline.check_policies(project, names, engine, pipeline.RunOptions(cache=False)).findings


def test_lint_results_follow_the_ray_generators_installed(tmp_path: Path, project: Project, cache_dir: Path,
                                                          engine: CueEngine, monkeypatch: pytest.MonkeyPatch):
    """A clean result checked with Ray's view is not an answer once the generator is gone: CI must not pass as if
    the autoscaler's view had been checked."""
    names = project.environment_names()
    with_view = policy_and_lint(project, names, CACHED, None, with_findings=True, engine=engine)
    assert not any(f.rule == "autoscaler/generator" for f in with_view)
    monkeypatch.setenv("KRC_RAY_ENVS", str(tmp_path / "no-ray-here"))
    without = policy_and_lint(project, names, CACHED, None, with_findings=True, engine=engine)
    assert {f.rule for f in without if f.severity == "error"} == {"autoscaler/generator"}


def test_a_cold_lint_validates_each_environment_once_and_finds_what_a_lint_over_cached_compiles_finds(
        project: Project, cache_dir: Path, monkeypatch: pytest.MonkeyPatch):
    """The compile's validation (its findings for the compile cache) is the one Ray's view and lint's findings
    read; a lint whose compiles come from the cache validates them itself, and finds the same."""
    from compiler.pipeline import context as pipeline_context
    from compiler.pipeline import environments, lint_batch

    validated: list[str] = []
    real = environments.validate_render

    def counted(render: Render, peers: tuple[Destination, ...] = (),
                started: environments.StartedValidation | None = None) -> environments.Validated:
        validated.append(render.environment.name)
        return real(render, peers, started)

    monkeypatch.setattr(pipeline_context, "validate_render", counted)
    monkeypatch.setattr(lint_batch, "validate_render", counted)
    names = project.environment_names()
    cold = policy_and_lint(project, names, CACHED, None, with_findings=True)
    assert sorted(validated) == sorted(names)
    shutil.rmtree(cache_dir / LINT_RESULTS.name)  # the compiles stay in the cache: lint validates them again
    validated.clear()
    assert policy_and_lint(project, names, CACHED, None, with_findings=True) == cold
    assert sorted(validated) == sorted(names)


def test_lints_findings_are_what_every_rule_finds_with_rays_view(project: Project, cache_dir: Path):
    """lint's shortcut (the compile's findings plus those of the rules that read the view) against the long way:
    every rule run again on the stored objects with the real generator's view."""
    dev = project.environment_file("dev")
    assert "      idleTimeoutSeconds: 60\n" in dev.read_text()
    dev.write_text(dev.read_text().replace("      idleTimeoutSeconds: 60\n", ""))  # the autoscaler's default
    names = project.environment_names()
    linted = policy_and_lint(project, names, CACHED, None, with_findings=True)
    peers = project_destinations(project)
    validated = [validate_render(compile_environment(project, name), peers) for name in names]
    expected: list[Problem] = []
    for entry, view in zip(validated, autoscaler_of(project, validated), strict=True):
        assert not view.unavailable, view.unavailable
        render = entry.render
        expected += lint_validated(dataclasses.replace(entry.context, autoscaler=view), list(entry.schema_problems))
        expected += environment_problems(project, render.environment, render.objects, None)
    assert any(p.rule.startswith("autoscaler/") for p in expected)  # the view adds findings here
    assert sorted_problems(linted) == sorted_problems(expected)
