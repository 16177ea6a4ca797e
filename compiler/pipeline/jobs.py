"""Running jobs over many environments: cache hits here, the rest in worker processes, results in order.
"""
from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import TypeVar

from .. import pipeline
from ..diagnostics.problems import KrcError, Problem, errors_among, has_errors, sorted_problems
from ..engines import jsonnet_ballast
from ..k8s.destinations import peer_digests
from ..native import helper_process
from ..output import folders, layout
from ..project.paths import Project
from ..results.compile_cache import CompileCache
from ..results.tree_digests import tree_digests
from ..settings import collector
from ..validation.server_updates import update_rejections
from . import workers_ahead
from .context import (
    Context,
    Rendered,
    charts_ahead,
    compile_cached,
    compiled_files,
    golden_mismatch,
    rendered_together,
)
from .plans import (
    AcceptPlan,
    Checked,
    CheckPlan,
    EnvironmentResult,
    GoldenMismatch,
    Job,
    Linted,
    LintPlan,
    Outcome,
    RenderPlan,
    ReviewPlan,
    Written,
)
from .run_options import CHARTS_AHEAD_FOR, SHARED_AT_MOST, RunOptions

R = TypeVar("R", bound=EnvironmentResult)


def run_job(job: Job, context: Context | None = None) -> Outcome:
    """A job's environments, each a result or the problems that stopped it (reported together by the caller)."""
    if context is None:  # in a worker process
        project = Project(job.root)
        # every command that runs jobs compares destinations (the main process sent the peers with the job)
        cache = CompileCache(project, job.cache, job.options, shared=job.shared, peers=peer_digests(job.peers or ()))
        context = Context(project, cache, alone=False)
        context._peers = job.peers  # computed once by the main process, never again per job
    match job.plan:
        case LintPlan():
            # the lint job, loaded by the first lint (render and check never load it, nor Ray's or CUE's clients)
            return pipeline.lints_of_batch(context, job.names, job.plan)
        case ReviewPlan():  # the review's job, loaded by the first review (render and check never load it)
            return pipeline.reviews_of_batch(context, job.names, job.plan)
        case RenderPlan() | AcceptPlan() | CheckPlan():
            return _written_or_checked(context, job.names, job.plan)


def _written_or_checked(context: Context, names: Sequence[str], plan: RenderPlan | AcceptPlan | CheckPlan) \
        -> Outcome:
    results: list[EnvironmentResult] = []
    problems: list[Problem] = []
    rendered = rendered_together(context, names)
    for name in names:
        try:
            result = _write_or_compare(context, plan, name, rendered.pop(name, None))
        except KrcError as err:
            problems.extend(err.problems)
            continue
        results.append(result)
    return Outcome(tuple(results), tuple(problems))


def _write_or_compare(context: Context, plan: RenderPlan | AcceptPlan | CheckPlan, name: str,
                      rendered: Rendered | KrcError | None) -> Written | Checked:
    """render/golden: one environment staged beside its target; check: compared with golden/."""
    project = context.project
    known = _up_to_date(context, plan, name) if rendered is None else None
    if known is not None:
        return known
    compiled, _ = compile_cached(project, context.cache, name, peers=context.peers, ahead=rendered)
    errors = errors_among(compiled.findings)
    if errors:
        raise KrcError(errors)
    if plan.work.over_golden:  # a change the API server refuses to apply over golden/'s object
        rejected = update_rejections(context.chart(*compiled.chart).crds, compiled.objects,
                                     folders.read_tree(project.golden_dir / name))
        if rejected:
            raise KrcError(rejected)
    common = (name, compiled.result_key, compiled.chart, compiled.object_count, compiled.findings,
              not compiled.from_cache or name in context.compiled_ahead)
    if isinstance(plan, CheckPlan):
        golden = folders.read_tree(project.golden_dir / name)
        return Checked(*common, mismatch=golden_mismatch(name, compiled_files(context, compiled), golden))
    result = Written(*common, crds=compiled.crds)
    if isinstance(plan, RenderPlan) and plan.up_to_date.get(name) == compiled.result_key:
        return result
    files = compiled_files(context, compiled)
    if isinstance(plan, AcceptPlan) and folders.read_tree(project.golden_dir / name) == files:
        return result  # golden/<env>/ already holds exactly this render: left as it is
    if isinstance(plan, RenderPlan):
        files = dict(sorted({**files, **layout.crd_files(context.chart(*compiled.chart))}.items()))
    return dataclasses.replace(result, staged=folders.stage_tree(plan.work.output_root(project) / name, files,
                                                                 keep_unchanged=isinstance(plan, RenderPlan)))


def _up_to_date(context: Context, plan: RenderPlan | AcceptPlan | CheckPlan, name: str) -> Written | Checked | None:
    """The result from the cache entry's summary alone, when the output is already right: rendered/<env>/ holds
    the current result, or golden/<env>/ holds files of exactly the compiled files' bytes (check and golden; most
    environments of most runs). None otherwise: the full entry (or a compile) decides, and reports errors."""
    skip = plan.up_to_date.get(name) if isinstance(plan, RenderPlan) else None
    if isinstance(plan, RenderPlan) and skip is None:
        return None
    summary = context.cache.summary(name)
    if summary is None or has_errors(summary.findings):
        return None
    common = (name, summary.result_key, summary.chart, summary.objects, summary.findings,
              name in context.compiled_ahead)
    if isinstance(plan, RenderPlan):
        if skip != summary.result_key:
            return None
    elif tree_digests(context.project.golden_dir / name, remember=context.cache.enabled) != summary.file_digests:
        return None
    elif isinstance(plan, CheckPlan):
        return Checked(*common, mismatch=GoldenMismatch(name, (), (), ()))
    # render: rendered/<env>/ holds it; golden: already accepted. Either way, left as it is
    return Written(*common, crds=summary.crds)


def parallel(jobs: Sequence[Job], run: RunOptions, to_compile: Callable[[Job], int],
              context: Context) -> Iterator[Outcome]:
    """Every job's outcome, in order. Cheap jobs (cache hits) run here; the rest, when there are two or more of
    them and enough environments to compile to repay a worker's start (RunOptions.workers_for), are shared
    between this process and workers-1 worker processes, each started fresh (a new interpreter: the Go runtime of
    gojsonnet does not survive a fork). This process works too rather than wait: a process holding the compiling
    stack (imports, parsed CRDs, compiled schemas) costs 100-200 MB, so one fewer of them keeps the peak memory
    down at the same number of busy cores."""
    counts = [to_compile(job) for job in jobs]
    heavy = [i for i, count in enumerate(counts) if count]
    workers = min(run.workers_for(jobs[0].work, sum(counts)), len(heavy)) if heavy else 1
    if workers > 1 or sum(counts) > CHARTS_AHEAD_FOR:  # many to compile: this process's Jsonnet collects less often
        jsonnet_ballast.hold(collector.command_ballast_mb())
    if workers < 2:
        workers_ahead.discard()
        if len(heavy) > 1 and sum(counts) <= SHARED_AT_MOST:
            # a few environments to lint, spread over several jobs (a pull request's): their policies in one
            # engine run at the end (policies_after) instead of one run per job, each paying CUE's start
            jobs = _policies_deferred(jobs)
        yield from (run_job(job, context) for job in jobs)
        return
    # each lint job's policies go to the shared engine from the process that compiled it, while the job's renders
    # are still in hand (CUE runs in the engine beside the other requests)
    context.alone = False  # this process runs its own jobs meanwhile
    workers_ahead.worker_setup()
    started = workers_ahead.take(workers - 1)  # spawned while this process read the destinations
    try:
        # the workers talk to this process's engine: one engine (one copy of the compiled CRDs) for the run
        with workers_ahead.spawning(), started or pipeline.new_pool(workers - 1, workers_ahead.worker_setup) as pool:
            yield from _shared(jobs, [i for i, count in enumerate(counts) if not count], heavy,
                               lambda job: pool.submit(run_job, dataclasses.replace(job, peers=context.peers)),
                               lambda job: run_job(job, context))
    finally:
        context.alone = True
        helper_process.POOL.keep_idle(True)


def _shared(jobs: Sequence[Job], light: Sequence[int], heavy: Sequence[int],
            submit: Callable[[Job], Future[Outcome]], here: Callable[[Job], Outcome]) -> Iterator[Outcome]:
    """Every job's outcome, in order, each job done by whichever process comes free first. Every heavy job goes to
    the workers at once, front first: the pool hands each worker its next as it answers, whatever this process is
    doing meanwhile (worker_pool). This process does the cache hits, then takes heavy jobs from the back, each
    one no worker has started yet (its call cancelled). No process waits for another while a job is left, and the
    last jobs are not held in a busy worker's pipe while this process has nothing to do."""
    sent = {i: submit(jobs[i]) for i in heavy}
    back, mine, done = deque(heavy), deque(light), dict[int, Outcome]()
    for first in range(len(jobs)):
        while first not in done:
            for i in [i for i, future in sent.items() if future.done()]:
                done[i] = sent.pop(i).result()
            if first in done:
                break
            take = mine.popleft() if mine else _last_not_started(back, sent)
            if take is not None:
                done[take] = here(jobs[take])
            else:
                wait(sent.values(), return_when=FIRST_COMPLETED)
        yield done.pop(first)


def _last_not_started(back: deque[int], sent: dict[int, Future[Outcome]]) -> int | None:
    """The last heavy job no worker has started, taken back from the workers; None when they have started every
    one left (they take them front first, so the last is the one to try)."""
    while back:
        i = back[-1]
        if i in sent and not sent[i].cancel():
            return None
        back.pop()
        if sent.pop(i, None) is not None:
            return i
    return None


def _policies_deferred(jobs: Sequence[Job]) -> list[Job]:
    """Lint jobs that leave their engine runs to the end of the run (policies_after, which finds their renders in
    the compile cache)."""
    return [dataclasses.replace(job, plan=dataclasses.replace(job.plan, defer_policies=True))
            if isinstance(job.plan, LintPlan) and job.plan.engine is not None and job.cache else job for job in jobs]


def outcomes(context: Context, jobs: Sequence[Job], run: RunOptions, record: type[R]) -> Iterator[R]:
    """Results of every job, in order, each the `record` its plan gives back (jobs of one command share a plan
    type); every problem of every environment at the end, as one KrcError."""
    if any(job.plan.record is not record for job in jobs):
        raise TypeError(f"jobs whose plans give back other records than {record.__name__}")
    cache = context.cache
    problems: list[Problem] = []

    def to_compile(job: Job) -> int:
        if isinstance(job.plan, LintPlan):
            basis = pipeline.lint_basis(context, job.plan)
            return sum(not pipeline.has_lint_result(context, job.plan, basis, name) for name in job.names)
        return sum(not cache.has_entry(name) for name in job.names)

    charts_ahead(context, [name for job in jobs for name in job.names])
    deferred: list[Linted] = []  # in order, from the first result whose policies are pending
    for outcome in parallel(jobs, run, to_compile, context):
        problems.extend(outcome.problems)
        for result in outcome.results:
            assert isinstance(result, record)
            if isinstance(result, Linted) and (deferred or result.policies_pending):
                deferred.append(result)
            else:
                yield result
    cache.save_summary_index([name for job in jobs for name in job.names])  # for the next command (summary_index)
    if deferred and not problems:
        try:
            for finished in pipeline.finish_policies(context, jobs, deferred):
                assert isinstance(finished, record)
                yield finished
        except KrcError as err:
            problems.extend(err.problems)
    if problems:
        # a shared template or layer fails the same way for every environment: say it once
        raise KrcError(sorted_problems(set(problems)))
