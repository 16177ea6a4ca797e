"""`krc diff` starts the changed environments' policies as soon as a review batch has rendered them, so CUE runs
while the review goes on (Ray's view, the other batches); before its policy step the command collects them into
the policy cache, where that step finds them and needs no engine run of its own. One such run at a time, and none
beside worker processes (one engine at a time keeps the memory bound)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from project_support import engine_unavailable

from compiler import pipeline
from compiler.pipeline import context as context_module
from compiler.pipeline.context import Context, compile_cached, restore
from compiler.pipeline.environments import Validated
from compiler.pipeline.lint_batch import policy_cache_key
from compiler.pipeline.plans import Reviewed, ReviewPlan
from compiler.pipeline.policies_ahead import drop_policies_ahead, keep_policies_ahead, start_policies_ahead
from compiler.pipeline.review_batch import reviews_of_batch
from compiler.policy import find_engine, policy_files
from compiler.project.paths import Project
from compiler.render.templates import Render
from compiler.results.compile_cache import POLICIES

CACHED = pipeline.RunOptions(cache=True, workers=1)
ALLOWED_IMAGE = "image: rayproject/ray:2.58.0-py312\n"


def _foreign_image_in_dev(project: Project) -> None:
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text() + "ray:\n  image: registry.example.com/ray:2.58.0-py312\n")


def _review_dev(project: Project, alone: bool = True) -> tuple[Context, str]:
    context = Context.of(project, CACHED)
    context.alone = alone
    outcome = reviews_of_batch(context, ("dev",), ReviewPlan())
    [result] = outcome.results
    assert isinstance(result, Reviewed) and result.review.changed
    compiled, _ = compile_cached(project, context.cache, "dev", peers=context.peers)
    key = policy_cache_key(context, compiled, policy_files(project.policies_dir), find_engine())
    return context, key


def test_one_run_at_a_time_and_a_dropped_run_keeps_nothing(project: Project, private_cache: Path):
    _foreign_image_in_dev(project)
    context, key = _review_dev(project)
    ahead = context.policies_ahead
    assert ahead is not None and ahead.keys == (key,)
    compiled, render = compile_cached(project, context.cache, "dev", peers=context.peers)
    start_policies_ahead(context, [(compiled.key, compiled.inputs_digest, render or restore(context, compiled))])
    assert context.policies_ahead is ahead  # the run under way stays the only one
    drop_policies_ahead(context)
    assert context.policies_ahead is None and context.cache.findings(POLICIES, key) is None


def test_a_changed_environments_policies_start_before_its_findings_are_worked_out(
        project: Project, private_cache: Path, monkeypatch: pytest.MonkeyPatch):
    """Rendering takes a third of compiling one environment, linting the rest: the engine gets that time too."""
    _foreign_image_in_dev(project)
    context = Context.of(project, CACHED)
    started_first: list[bool] = []
    validate = context_module.validate_render

    def spy(render: Render, *args: Any, **kwargs: Any) -> Validated:
        started_first.append(context.policies_ahead is not None)
        return validate(render, *args, **kwargs)

    monkeypatch.setattr(context_module, "validate_render", spy)
    reviews_of_batch(context, ("dev",), ReviewPlan())
    assert started_first == [True]
    drop_policies_ahead(context)


def test_a_changed_environment_the_compile_cache_answers_still_has_its_policies_started(
        project: Project, private_cache: Path):
    _foreign_image_in_dev(project)
    first, key = _review_dev(project)
    drop_policies_ahead(first)  # compiled and kept, its policies never ran
    context = Context.of(project, CACHED)
    reviews_of_batch(context, ("dev",), ReviewPlan())
    assert context.policies_ahead is not None and context.policies_ahead.keys == (key,)
    keep_policies_ahead(context)
    kept = context.cache.findings(POLICIES, key)
    assert kept is not None and {p.rule for p in kept} == {"policy/image-registry"}


def test_the_review_keeps_the_policy_findings_of_a_changed_environment(tmp_path: Path, project: Project,
                                                                       private_cache: Path,
                                                                       monkeypatch: pytest.MonkeyPatch):
    _foreign_image_in_dev(project)
    context, key = _review_dev(project)
    assert context.cache.findings(POLICIES, key) is None  # under way until the command collects it
    keep_policies_ahead(context)
    kept = context.cache.findings(POLICIES, key)
    assert kept is not None and {p.rule for p in kept} == {"policy/image-registry"}
    # the policy step answers from them: no engine can start now, and none is needed
    engine = find_engine()
    engine_unavailable(monkeypatch, tmp_path)
    found = pipeline.check_policies(project, ("dev",), engine, CACHED).findings
    assert list(found) == list(kept)
    monkeypatch.delenv("KRC_ENGINE")
    assert found == pipeline.check_policies(project, ("dev",), engine, pipeline.RunOptions(cache=False)).findings


def test_beside_worker_processes_a_review_starts_no_engine(project: Project, private_cache: Path,
                                                           monkeypatch: pytest.MonkeyPatch):
    _foreign_image_in_dev(project)
    context, key = _review_dev(project, alone=False)  # as in a process of a parallel run
    assert context.policies_ahead is None
    keep_policies_ahead(context)
    assert context.cache.findings(POLICIES, key) is None
