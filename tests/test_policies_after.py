"""Beside worker processes, `krc lint` and `krc policy` leave their CUE engine runs to the main process once the
workers are gone (memory: no engine beside two processes holding the compiling stack); the findings are those of
a sequential run, and the finished results are kept as a sequential run keeps them."""
from __future__ import annotations

import dataclasses
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from project_support import copy_environment
from test_compile_cache import REPO_ROOT, policy_project

from compiler import compile_cache, pipeline
from compiler.pipeline import jobs as jobs_module
from compiler.pipeline import policies_after
from compiler.pipeline.linting import policy_and_lint
from compiler.policy import find_engine
from compiler.policy.engine import CueEngine
from compiler.problems import KrcError
from compiler.project import Project

POOLED = pipeline.RunOptions(cache=True, workers=2, policy_batch=1, repaid_by=1)


def _logging_engine(tmp_path: Path, real: CueEngine, served: bool = False) -> tuple[CueEngine, Path]:
    """The real engine, started through a script that first notes which process started it. `served`: the
    engine kept up between runs as krc runs the WebAssembly one (helper_process), else one process per run."""
    log = tmp_path / "engine-parents.log"
    script = tmp_path / "logging_cue.py"
    script.write_text("import os, sys\n"
                      f"with open({str(log)!r}, 'a') as out:\n    out.write(f'{{os.getppid()}}\\n')\n"
                      "os.execv(sys.argv[1], sys.argv[1:])\n")
    logged = (sys.executable, str(script))
    serve = (*logged, *real.serve_command) if served and real.serve_command else ()
    return CueEngine((*logged, *real.command), f"{real.description}, logged", serve, real.wasm_package), log


def test_the_engine_runs_in_the_main_process_after_the_workers(tmp_path: Path, project: Project,
                                                               private_cache: Path):
    project = policy_project(project)
    copy_environment(project, "dev")
    names = project.environment_names()
    real = find_engine([REPO_ROOT])
    logged, log = _logging_engine(tmp_path, real, served=True)

    pooled = policy_and_lint(project, names, POOLED, None, with_findings=True, engine=logged)
    assert set(log.read_text().split()) == {str(os.getpid())}  # no engine started in a worker
    sequential = policy_and_lint(project, names, pipeline.RunOptions(cache=False, workers=1), None,
                                 with_findings=True, engine=real)
    assert pooled == sequential
    assert {f.message.split(":")[0] for f in pooled if f.rule == "policy/dev-no-gpu"} == {
        "environment dev", "environment dev-copy"}

    # the finished results were kept: with neither the compiled entries nor the policy findings, and the same
    # engine by name that cannot start, the next run gives them all the same
    shutil.rmtree(private_cache / compile_cache.FOLDER)
    shutil.rmtree(private_cache / compile_cache.POLICIES)
    broken = CueEngine((str(tmp_path / "no-such-cue"),), logged.description)
    assert policy_and_lint(project, names, POOLED, None, with_findings=True, engine=broken) == pooled
    assert not (private_cache / compile_cache.FOLDER).exists()
    policies = pipeline.check_policies(project, (), logged, dataclasses.replace(POOLED, cache=True))
    assert policies == pipeline.check_policies(project, (), real, pipeline.RunOptions(cache=False, workers=1))


def test_a_broken_policy_stops_the_engine_runs_and_is_reported_once(tmp_path: Path, project: Project,
                                                                     private_cache: Path,
                                                                     monkeypatch: pytest.MonkeyPatch):
    copy_environment(project, "dev")
    (project.policies_dir / "broken.cue").write_text("package policy\n\nenv: name: strings.MaxRunes(3)\n")
    logged, log = _logging_engine(tmp_path, find_engine([REPO_ROOT]))
    monkeypatch.setattr(policies_after, "ENGINE_BATCH", 1)  # three runs of one environment, two at a time
    with pytest.raises(KrcError) as raised:
        policy_and_lint(project, project.environment_names(), POOLED, None, with_findings=True, engine=logged)
    assert [p.one_line() for p in raised.value.problems] == [
        'policies/broken.cue:3:12: error: CUE cannot evaluate this policy: reference "strings" not found; '
        "fix the policy"]
    assert len(log.read_text().split()) == 2  # the first two runs failed; the third never started


def test_a_few_environments_over_several_jobs_share_engine_runs_at_the_end(project: Project, private_cache: Path,
                                                                          monkeypatch: pytest.MonkeyPatch):
    """Without workers too: a few environments to lint in jobs of their own (a pull request's, spread over the
    project) leave their policies to policies_after, which shares them between its two engines, instead of one
    engine run per job; the findings are those of one run for all."""
    project = policy_project(project)
    copy_environment(project, "dev")
    names = project.environment_names()
    finished: list[list[str]] = []
    real = jobs_module.finish_policies

    def finish(context: Any, jobs: Any, results: Any) -> Any:
        finished.append([result.name for result in results])
        return real(context, jobs, results)

    monkeypatch.setattr(jobs_module, "finish_policies", finish)
    engine = find_engine([REPO_ROOT])
    spread = policy_and_lint(project, names, pipeline.RunOptions(cache=True, workers=1, policy_batch=1), None,
                             with_findings=True, engine=engine)
    assert finished == [names]  # every environment's policies, once, at the end
    whole = policy_and_lint(project, names, pipeline.RunOptions(cache=False, workers=1), None, with_findings=True,
                            engine=engine)
    assert spread == whole
    assert {f.message.split(":")[0] for f in spread if f.rule == "policy/dev-no-gpu"} == {
        "environment dev", "environment dev-copy"}
