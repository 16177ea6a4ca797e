"""Where `krc lint` and `krc policy` send their policy requests: beside worker processes, each job's from the process
that compiled it (the run's one engine answers them beside its other requests); without workers, a few environments
spread over several jobs leave theirs to the main process at the end (policies_after). The findings are those of a
sequential run either way, and the finished results are kept as a sequential run keeps them."""
from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest
from project_support import copy_environment, engine_unavailable
from test_compile_cache import policy_project

from compiler import pipeline
from compiler.diagnostics.problems import KrcError
from compiler.native import client
from compiler.pipeline import policies_after
from compiler.pipeline.linting import policy_and_lint
from compiler.policy import find_engine
from compiler.project.paths import Project
from compiler.results import compile_cache

POOLED = pipeline.RunOptions(cache=True, workers=2, policy_batch=1, repaid_by=1)


def _policy_requests(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The environments of each policy request this process sends to the (real) engine; a worker process's
    requests are not seen here."""
    sent: list[tuple[str, ...]] = []

    class Recorded(client.Pending):
        def __init__(self, op: str, args: dict[str, Any], what: str, timeout: float) -> None:
            if op == "policy":
                sent.append(tuple(item["name"] for item in args["inputs"]))
            super().__init__(op, args, what, timeout)

    monkeypatch.setattr(client, "Pending", Recorded)
    return sent


def _compiled_here(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The environments of each lint job this process runs (a worker's jobs are not seen here)."""
    ran: list[tuple[str, ...]] = []
    real = pipeline.lints_of_batch

    def recorded(context: Any, names: Any, plan: Any) -> Any:
        ran.append(tuple(names))
        return real(context, names, plan)

    monkeypatch.setattr(pipeline, "lints_of_batch", recorded)
    return ran


def test_each_job_sends_its_policies_from_the_process_that_compiled_it(tmp_path: Path, project: Project,
                                                                        private_cache: Path,
                                                                        monkeypatch: pytest.MonkeyPatch):
    project = policy_project(project)
    copy_environment(project, "dev")
    names = project.environment_names()
    real = find_engine()
    sent = _policy_requests(monkeypatch)
    here = _compiled_here(monkeypatch)

    pooled = policy_and_lint(project, names, POOLED, None, with_findings=True, engine=real)
    # three jobs of one environment: the worker was sent the first at once, this process took the last (and the
    # second too when the worker had not started it yet), and each job's policies went from the process that
    # compiled it (none waited for the workers to end)
    assert here[0] == (names[2],) and (names[0],) not in here
    assert sent == here
    sequential = policy_and_lint(project, names, pipeline.RunOptions(cache=False, workers=1), None,
                                 with_findings=True, engine=real)
    assert pooled == sequential
    assert {f.message.split(":")[0] for f in pooled if f.rule == "policy/dev-no-gpu"} == {
        "environment dev", "environment dev-copy"}

    # the finished results were kept: with neither the compiled entries nor the policy findings, and the same
    # engine by name that cannot start, the next run gives them all the same
    shutil.rmtree(private_cache / compile_cache.COMPILED.name)
    shutil.rmtree(private_cache / compile_cache.POLICIES.name)
    engine_unavailable(monkeypatch, tmp_path)
    assert policy_and_lint(project, names, POOLED, None, with_findings=True, engine=real) == pooled
    assert not (private_cache / compile_cache.COMPILED.name).exists()
    monkeypatch.delenv("KRC_ENGINE")
    policies = pipeline.check_policies(project, (), real, dataclasses.replace(POOLED, cache=True))
    assert policies == pipeline.check_policies(project, (), real, pipeline.RunOptions(cache=False, workers=1))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_broken_policy_stops_the_engine_runs_and_is_reported_once(tmp_path: Path, project: Project,
                                                                     private_cache: Path,
                                                                     monkeypatch: pytest.MonkeyPatch, workers: int):
    copy_environment(project, "dev")
    (project.policies_dir / "broken.cue").write_text("package policy\n\nenv: name: strings.MaxRunes(3)\n")
    sent = _policy_requests(monkeypatch)
    here = _compiled_here(monkeypatch)
    monkeypatch.setattr(policies_after, "ENGINE_BATCH", 1)  # three requests of one environment, two at a time
    with pytest.raises(KrcError) as raised:
        policy_and_lint(project, project.environment_names(), dataclasses.replace(POOLED, workers=workers), None,
                        with_findings=True, engine=find_engine())
    assert [p.one_line() for p in raised.value.problems] == [
        'policies/broken.cue:3:12: error: CUE cannot evaluate this policy: reference "strings" not found; '
        "fix the policy"]
    # without workers the three jobs left their policies to the end, where the first two requests failed and the
    # third was never sent; beside a worker, this process sent its own jobs' requests, each with its job
    if workers == 1:
        assert len(sent) == 2
    else:
        assert sent == here and 1 <= len(here) <= 2


def test_a_few_environments_over_several_jobs_share_engine_runs_at_the_end(project: Project, private_cache: Path,
                                                                          monkeypatch: pytest.MonkeyPatch):
    """Without workers too: a few environments to lint in jobs of their own (a pull request's, spread over the
    project) leave their policies to policies_after, which shares them between its two engines, instead of one
    engine run per job; the findings are those of one run for all."""
    project = policy_project(project)
    copy_environment(project, "dev")
    names = project.environment_names()
    finished: list[list[str]] = []
    real = pipeline.finish_policies  # the jobs call it through the package (loaded by lint alone)

    def finish(context: Any, jobs: Any, results: Any) -> Any:
        finished.append([result.name for result in results])
        return real(context, jobs, results)

    monkeypatch.setattr(pipeline, "finish_policies", finish)
    engine = find_engine()
    spread = policy_and_lint(project, names, pipeline.RunOptions(cache=True, workers=1, policy_batch=1), None,
                             with_findings=True, engine=engine)
    assert finished == [names]  # every environment's policies, once, at the end
    whole = policy_and_lint(project, names, pipeline.RunOptions(cache=False, workers=1), None, with_findings=True,
                            engine=engine)
    assert spread == whole
    assert {f.message.split(":")[0] for f in spread if f.rule == "policy/dev-no-gpu"} == {
        "environment dev", "environment dev-copy"}
