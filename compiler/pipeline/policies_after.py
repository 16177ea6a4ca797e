"""The policies a `krc lint` / `krc policy` without workers left for later: when it lints a few environments spread
over several jobs (a pull request's), their policies go to the engine as a few requests at the end, two under way
at a time (the engine answers them side by side), instead of one request per job.

A run with workers does not come here: each job sends its policies from the process that compiled it, while its
renders are in hand, and the run's engine evaluates them beside its other requests (each input in a CUE context of
its own: engine/policy.go). Sending them all from the main process once the workers were gone (as krc did for CUE
in WebAssembly, 114 MB per engine run) left the end of the run to one core, and loaded every environment again.
The batches (ENGINE_BATCH) bound one request's size. Ray's generators are done by then: ended first, not left to
their idle time, unless the caller asked for a longer idle time. The inputs come back from the compile cache, so a
job defers its policies only when the cache is on.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..autoscaler import end_idle_generators
from ..diagnostics.problems import KrcError, Problem
from ..policy import PolicyRun, policy_files, policy_input
from ..render.templates import Render
from ..results.compiled_records import Compiled
from .context import Context, compile_cached, restore
from .lint_batch import (
    LintBasis,
    lint_basis,
    policy_cache_key,
    project_policy_run,
    store_lint_results,
    with_policy_findings,
)
from .plans import Job, Linted, LintPlan

ENGINE_BATCH = 6  # environments per engine run here (see the module's docstring)
ENGINES = 2  # engine runs at a time


@dataclass(frozen=True)
class _Waiting:
    """One engine run under way, and for each of its environments: its place in the results, its job, its
    compiled result and render, and where its findings go in the policy cache."""

    run: PolicyRun
    items: tuple[tuple[int, Job, LintPlan, Compiled, Render, str], ...]


def finish_policies(context: Context, jobs: Sequence[Job], results: Sequence[Linted]) -> list[Linted]:
    """`results` with every pending environment's policy findings added (its `lint.rules` settings applied when
    its job asks) and its finished result kept in the lint cache; KrcError with every problem found."""
    end_idle_generators()  # Ray's generators have answered all this command asks: their memory goes to CUE
    job_of = {name: job for job in jobs for name in job.names}
    policies = tuple(policy_files(context.project.policies_dir))
    out = list(results)
    todo = [i for i, result in enumerate(out) if result.policies_pending]
    size = max(1, min(ENGINE_BATCH, -(-len(todo) // ENGINES)))  # a few environments: shared by both engines
    chunks = [todo[i:i + size] for i in range(0, len(todo), size)]
    problems: list[Problem] = []
    bases = {job.names: lint_basis(context, job.plan) for job in jobs if isinstance(job.plan, LintPlan)}
    for first in range(0, len(chunks), ENGINES):
        waiting: list[_Waiting] = []
        try:
            for chunk in chunks[first:first + ENGINES]:
                waiting.append(_start(context, job_of, policies, out, chunk))
            for each in waiting:
                problems.extend(_finish(context, out, each, bases))
        except KrcError as err:  # a broken policy: every other run would stop on it too
            problems.extend(err.problems)
            break
        finally:
            for each in waiting:
                each.run.close()
    if problems:
        raise KrcError(problems)
    return out


def _start(context: Context, job_of: dict[str, Job], policies: tuple[Path, ...], results: list[Linted],
           chunk: Sequence[int]) -> _Waiting:
    """The chunk's inputs, from the compile cache the workers filled, and its engine run, started."""
    project = context.project
    items = []
    for index in chunk:
        job = job_of[results[index].name]
        plan = job.plan
        # only a lint plan with an engine defers its policies
        assert isinstance(plan, LintPlan) and plan.engine is not None
        compiled, render = compile_cached(project, context.cache, results[index].name, plan.argocd_crds,
                                          lint=plan.findings, peers=context.peers)
        key = policy_cache_key(context, compiled, policies, plan.engine)
        items.append((index, job, plan, compiled, render or restore(context, compiled), key))
    run = project_policy_run(project, [policy_input(render) for *_, render, _ in items], items[0][2].engine)
    run.start()
    return _Waiting(run, tuple(items))


def _finish(context: Context, results: list[Linted], waiting: _Waiting,
            bases: dict[tuple[str, ...], LintBasis]) -> list[Problem]:
    problems: list[Problem] = []
    for (index, job, plan, compiled, render, key), found in zip(waiting.items, waiting.run.results(), strict=True):
        try:
            results[index] = with_policy_findings(context, plan, results[index], render, key, found)
        except KrcError as err:
            problems.extend(err.problems)
            continue
        store_lint_results(context, bases[job.names], [results[index]], {compiled.name: compiled})
    return problems
