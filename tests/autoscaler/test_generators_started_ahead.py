"""`krc lint` starts Ray's generators of the versions a job's environments name as soon as the job has loaded
them, before their templates are evaluated: the generator imports Ray meanwhile, and the versions come from the
environments the job loads anyway (their files were read a second time for them before)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compiler import pipeline
from compiler.environment.model import load_environment
from compiler.pipeline import environments as pipeline_environments
from compiler.pipeline import lint_batch
from compiler.pipeline.environments import ray_version
from compiler.project.paths import Project


def test_lint_starts_the_generators_of_the_environments_it_loaded(project_without_policies: Project,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    project = project_without_policies
    started: list[set[str]] = []
    evaluated_after: list[bool] = []
    real_start, real_prepare = lint_batch.start_generators_ahead, pipeline.context.prepare_templates

    def start(root: Path, versions: Any) -> None:
        started.append(set(versions))
        real_start(root, versions)

    def prepare(*args: Any, **kwargs: Any) -> Any:
        evaluated_after.append(bool(started))
        return real_prepare(*args, **kwargs)

    def settings_read(*args: Any, **kwargs: Any) -> Any:
        partial_reads.append(args[1])
        return real_settings(*args, **kwargs)

    partial_reads: list[str] = []
    real_settings = pipeline_environments.merged_settings
    monkeypatch.setattr(lint_batch, "start_generators_ahead", start)
    monkeypatch.setattr(pipeline.context, "prepare_templates", prepare)
    monkeypatch.setattr(pipeline_environments, "merged_settings", settings_read)
    found = pipeline.lint_environments(project, (), run=pipeline.RunOptions(cache=False, workers=1))
    names = project.environment_names()
    # each environment's settings read once in part (where it deploys), not a second time for its Ray version
    assert sorted(partial_reads) == sorted(names)
    assert started == [{ray_version(load_environment(project, name)) for name in names}]
    assert evaluated_after == [True]  # the templates were evaluated once the generators were on their way
    assert not any(p.rule == "autoscaler/generator" for p in found)  # Ray's view was checked


def test_a_lint_from_the_cache_starts_no_generator(project_without_policies: Project,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    project = project_without_policies
    run = pipeline.RunOptions(workers=1)
    first = pipeline.lint_environments(project, (), run=run)
    started: list[Any] = []
    monkeypatch.setattr(lint_batch, "start_generators_ahead", lambda root, versions: started.append(versions))
    assert pipeline.lint_environments(project, (), run=run) == first
    assert started == []
