"""The whole pipeline, top to bottom: load environment -> validate -> render -> check -> write or compare.

Every command of the CLI calls one function here, and this is the only module that loops over environments:
the stages below it (lint, policy, review, argocd, crddiff, output) each work on one compiled environment or
one set of CRDs. Nothing here prints or exits; bad input raises KrcError.

Commands over many environments take each one's compiled result from the compile cache (compile_cache.py) or
compile it, in worker processes when two or more need compiling (`_parallel`), and keep only what the command
needs of each (`EnvironmentResult`), so memory does not grow with the number of environments.
"""
from __future__ import annotations

import contextlib
import dataclasses
import difflib
import hashlib
import math
import multiprocessing
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import argocd, crddiff, inventory, output, review, scaffold, yamlio
from . import explain as explaining
from .argocd.validation import crds_path, environment_problems
from .autoscaler import AutoscalerView, Batch, autoscaler_views, valid_ray_version
from .charts import vendor
from .charts.package import Chart
from .compile_cache import CompileCache, Compiled, OutputStamps, path_digest
from .environment.model import Environment, load_environment
from .k8s.secrets import redact_at
from .lint import (
    LintContext,
    LintObject,
    environment_context,
    lint_objects,
    lint_validated,
    paths_context,
    validate_objects,
)
from .policy import CueEngine, evaluate_each, find_engine, policy_files, policy_input
from .policy.engine import cue_on_path, wasm_engine
from .policy.inputs import with_policy_settings
from .policy.limits import capacity_limits
from .problems import KrcError, Location, Problem, sorted_problems
from .project import Project, find_project, shown_name
from .render import Render, render_environment, render_environments
from .review.golden_source import GitGolden, WorkingTreeGolden
from .review.ray_view import ClusterRows, cluster_rows, two_views
from .rules import describe, summaries
from .rules.support.destinations import Destination, destination_of


def chart_pin(env: Environment) -> vendor.ChartPin:
    chart = env.data["operator"]["chart"]
    name, version = str(chart["name"]), str(chart["version"])
    problem = vendor.chart_pin_problem(name, version)
    if problem:  # before the name or version touches a path
        field = "name" if "name" in problem.split(" is ")[0] else "version"
        raise KrcError(problem, env.location_of(("operator", "chart", field)))
    return vendor.ChartPin(name, version, str(chart["repository"]))


def compile_environment(project: Project, name: str) -> Render:
    env = load_environment(project, name)
    pin = chart_pin(env)
    chart = vendor.load_vendored_chart(project.vendor_dir, pin.name, pin.version)
    return render_environment(project, env, chart)


@dataclass(frozen=True)
class Validated:
    """A render with its objects as the API server stores them (CRD defaults applied) and the schema findings."""

    render: Render
    context: LintContext
    schema_problems: tuple[Problem, ...]


def validate_render(render: Render, peers: tuple[Destination, ...] = ()) -> Validated:
    """`peers`: where the project's other environments deploy (the destination-collision rule reads them)."""
    context, problems = validate_objects(environment_context(render, peers))
    return Validated(render, context, tuple(problems))


def ray_version(env: Environment) -> str:
    ray = env.data.get("ray")
    return str(ray.get("version") or "") if isinstance(ray, dict) else ""


def autoscaler_of(project: Project, validated: Sequence[Validated]) -> list[AutoscalerView]:
    """What Ray's autoscaling-config generator (of each environment's ray.version) makes of every cluster spec
    the environments render, stored objects as the autoscaler reads them: one process for all of them."""
    return autoscaler_views(project.root, [Batch(ray_version(v.render.environment),
                                                 tuple(o.document for o in v.context.objects)) for v in validated])


def _generator_missing(render: Render, view: AutoscalerView) -> Problem:
    where = render.environment.location_of(("ray", "version")) or Location(f"environment {render.environment.name}")
    return Problem(f"the autoscaler's view was not checked: {view.unavailable}", where, "error",
                   "autoscaler/generator", object=f"environment/{render.environment.name}",
                   segments=("ray", "version"))


def validated_findings(validated: Validated, project: Project | None = None, argocd_crds: str | None = None,
                       view: AutoscalerView | None = None) -> list[Problem]:
    """Every finding about what an environment renders: schema and rules against the pinned CRDs (with the
    autoscaler's view when given), and (given the project) its Argo CD objects against the Argo CD CRDs it names
    or `argocd_crds`. A view without a generator is an error: CI must not pass as if it had been checked."""
    context = dataclasses.replace(validated.context, autoscaler=view) if view is not None else validated.context
    findings = lint_validated(context, list(validated.schema_problems))
    render = validated.render
    if view is not None and view.unavailable:
        findings.append(_generator_missing(render, view))
    if project is not None:
        findings += environment_problems(project, render.environment, render.objects, argocd_crds)
    return sorted_problems(findings)


def project_destinations(project: Project, cache: CompileCache | None = None) -> tuple[Destination, ...]:
    """Where every environment of the project deploys (files that fail to load are reported on their own); from
    `cache` for environments whose layers kept their bytes."""
    found = []
    for name in project.environment_names():
        known, destination = cache.destination(name) if cache is not None else (False, None)
        if not known:
            try:
                env = load_environment(project, name)
            except KrcError:
                continue
            destination = destination_of(name, env.data, env.files[-1] if env.files else f"environments/{name}.yaml")
            if cache is not None:
                cache.store_destination(name, destination, [project.root / f for f in env.files])
        if destination is not None:
            found.append(destination)
    return tuple(found)


def environment_findings(render: Render, project: Project | None = None, argocd_crds: str | None = None,
                         peers: tuple[Destination, ...] | None = None) -> list[Problem]:
    """The findings `krc render` stops on: everything but the autoscaler's view (render never needs Ray); the
    environment's destination is compared with `peers` (read from the project when not given)."""
    if peers is None:
        peers = project_destinations(project) if project is not None else ()
    return validated_findings(validate_render(render, peers), project, argocd_crds)


def check_environment(render: Render, project: Project | None = None, argocd_crds: str | None = None,
                      peers: tuple[Destination, ...] | None = None) -> Render:
    """The render with its findings; error-level findings stop the pipeline."""
    findings = environment_findings(render, project, argocd_crds, peers)
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        raise KrcError(errors)
    return dataclasses.replace(render, findings=tuple(findings))


def compile_environments(project: Project, names: Sequence[str], lint: bool = True) -> list[Render]:
    """Every named environment, checked, or every problem of all of them (one bad file does not hide another)."""
    renders: list[Render] = []
    problems: list[Problem] = []
    peers = project_destinations(project) if lint else ()
    for name in names:
        try:
            render = compile_environment(project, name)
            renders.append(check_environment(render, project, peers=peers) if lint else render)
        except KrcError as err:
            problems.extend(err.problems)
    if problems:
        # a shared template or layer fails the same way for every environment: say it once
        raise KrcError(sorted_problems(set(problems)))
    return renders


def vendor_charts(project: Project, names: Sequence[str]) -> list[vendor.VendorResult]:
    """Download every chart the environments pin (and only what the cache lacks)."""
    pins = [chart_pin(load_environment(project, name)) for name in names]
    if vendor.up_to_date(project.vendor_dir, pins):
        return vendor.vendor(project.vendor_dir, pins)  # writes nothing: a read-only checkout works
    with output.project_lock(project):
        project.checked_output_dir(project.vendor_dir / "charts")
        return vendor.vendor(project.vendor_dir, pins)


# ---- many environments: the compile cache and the parallel map ---------------------------------------------

@dataclass(frozen=True)
class RunOptions:
    """How a command works through environments: the compile cache (`--no-cache` turns it off) and how many
    processes compile in parallel (`--jobs`; None: one per core). Output is the same whatever they are."""

    cache: bool = True
    workers: int | None = None

    def worker_count(self) -> int:
        return max(1, self.workers if self.workers is not None else (os.cpu_count() or 1))


DEFAULT_RUN = RunOptions()
# Environments per CUE engine run: the WebAssembly engine needs a few MB per environment and fails near 2 GB, so
# runs stay far below that; each environment is unified with each policy on its own, so batching changes nothing.
POLICY_BATCH = 25
# Environments per `krc render`, `krc golden` and `krc check` job (a worker compiles them one after another).
RENDER_BATCH = 25
# Environments per `krc diff` job: Ray's autoscaler view of a job's environments comes from one generator process.
REVIEW_BATCH = 40


class _Context:
    """What one command's work shares, in one process: the project, its cache, the charts read so far."""

    def __init__(self, project: Project, cache: CompileCache, with_peers: bool = True):
        self.project = project
        self.cache = cache
        self.with_peers = with_peers
        self._charts: dict[tuple[str, str], Chart] = {}
        self._peers: tuple[Destination, ...] | None = None

    @classmethod
    def of(cls, project: Project, run: RunOptions, options: str = "", with_peers: bool = True) -> _Context:
        """With peers, findings compare each environment's destination with the others', so the others'
        destinations join the cache key (an environment's findings change when another one moves)."""
        peers = project_destinations(project, CompileCache(project, run.cache)) if with_peers else ()
        if with_peers:
            options += f";peers={hashlib.sha256(repr(peers).encode()).hexdigest()[:16]}"
        context = cls(project, CompileCache(project, run.cache, options), with_peers)
        context._peers = peers
        return context

    @property
    def peers(self) -> tuple[Destination, ...]:
        if self._peers is None:
            self._peers = project_destinations(self.project) if self.with_peers else ()
        return self._peers

    def chart(self, name: str, version: str) -> Chart:
        if (name, version) not in self._charts:
            self._charts[(name, version)] = vendor.load_vendored_chart(self.project.vendor_dir, name, version)
        return self._charts[(name, version)]


def _argocd_option(argocd_crds: str | None) -> str:
    """What an explicit --argocd-crds adds to the cache key: its path and content."""
    if not argocd_crds:
        return ""
    path = Path(argocd_crds).resolve()
    return f"argocd-crds={path}:{path_digest(path)}"


def _rendered_together(context: _Context, names: Sequence[str]) -> dict[str, tuple[str, Render]]:
    """The environments the cache lacks, rendered together (render_environments: one Jsonnet run for all), each
    with its cache key as it was before rendering. Environments that fail are left out: _compile renders them on
    their own and reports their problems as always."""
    project, cache = context.project, context.cache
    keys, pairs = [], []
    for name in names:
        if cache.has_entry(name):
            continue
        try:
            key = cache.key(name)
            env = load_environment(project, name)
            pin = chart_pin(env)
            pairs.append((env, context.chart(pin.name, pin.version)))
            keys.append(key)
        except KrcError:
            continue
    renders = render_environments(project, pairs)
    return {env.name: (key, render) for key, (env, _), render in zip(keys, pairs, renders, strict=True)
            if isinstance(render, Render)}


def _compile(project: Project, cache: CompileCache, name: str, argocd_crds: str | None = None,
             lint: bool = True, peers: tuple[Destination, ...] = (),
             rendered: tuple[str, Render] | None = None) -> tuple[Compiled, Render | None]:
    """One environment's compiled result from the cache, else compiled (and kept when its key held still).
    With `lint`, findings that cannot be computed (bad lint settings) are bad input; without, they are left out.
    `rendered`: its key and render from _rendered_together."""
    found = cache.lookup(name)
    if found is not None:
        return found, None
    key, render = rendered or (cache.key(name), compile_environment(project, name))
    try:
        findings: list[Problem] | None = environment_findings(render, project, argocd_crds, peers)
    except KrcError:
        if lint:
            raise
        findings = None
    compiled = Compiled(name, key, (render.chart.name, render.chart.version), output.render_files(render, False),
                        render.objects, render.helm_values, tuple(findings or ()), render.chart_objects)
    if findings is not None and cache.key(name) == key:  # the file did not change while it compiled
        named = crds_path(project, render.environment) if not argocd_crds else None
        cache.store(compiled, [project.root / f for f in render.environment.files] + ([named] if named else []))
    return compiled, render


def _restore(context: _Context, compiled: Compiled) -> Render:
    """The full Render of a cached result (what provenance needs: the loaded environment with its origins)."""
    return Render(load_environment(context.project, compiled.name), context.chart(*compiled.chart),
                  compiled.helm_values, compiled.objects, compiled.findings, compiled.chart_objects)


def _errors(compiled: Compiled) -> list[Problem]:
    return [f for f in compiled.findings if f.severity == "error"]


def _documents_by_file(compiled: Compiled) -> dict[str, dict[str, Any]]:
    documents = [o.document for o in compiled.objects]
    return dict(zip(output.manifest_names(documents), documents, strict=True))


@dataclass(frozen=True)
class GoldenMismatch:
    environment: str
    changed: tuple[str, ...]
    added: tuple[str, ...]  # rendered but not in golden
    removed: tuple[str, ...]  # in golden but no longer rendered
    orphaned: bool = False  # golden/<env>/ of an environment whose file is gone
    pruned: tuple[str, ...] = ()  # what deleting the removed objects does, one line per object

    @property
    def clean(self) -> bool:
        return not (self.changed or self.added or self.removed)


@dataclass(frozen=True)
class _Job:
    """One unit of work for a worker process: picklable, it names its project and environments."""

    command: str  # render, golden, check, review, lint
    root: Path
    names: tuple[str, ...]
    cache: bool
    shared: str  # the cache's shared digest, as the main process computed it
    options: str = ""  # the cache's options string
    argocd_crds: str | None = None
    skip_keys: dict[str, str] | None = None  # render: the keys rendered/<env>/ already hold, untouched since
    golden: dict[str, output.Files] | None = None  # review at a git ref: golden files by environment
    findings: bool = True  # lint: schema and rule findings (else only policies)
    engine: CueEngine | None = None  # lint: the policies' engine (None: no policies to run)
    policy_settings: bool = True  # lint: apply the environments' `lint.rules` settings for policies
    peers: tuple[Destination, ...] | None = None  # where every environment deploys (set when sent to a worker)


@dataclass(frozen=True)
class EnvironmentResult:
    """What a command keeps of one environment (never the whole render: memory stays flat as N grows)."""

    name: str
    key: str = ""
    chart: tuple[str, str] = ("", "")
    objects: int = 0
    crds: int = 0  # render/golden: the pinned chart's CRDs
    findings: tuple[Problem, ...] = ()
    compiled: bool = False  # compiled in this run (False: taken from the cache)
    staged: Path | None = None  # render/golden: the folder written beside its target, not yet swapped in
    mismatch: GoldenMismatch | None = None
    reviewed: review.EnvironmentReview | None = None


@dataclass(frozen=True)
class _Outcome:
    results: tuple[EnvironmentResult, ...] = ()
    problems: tuple[Problem, ...] = ()
    compiled: tuple[str, ...] = ()  # the environments this job compiled (the others came from the cache)


def _groups(names: Sequence[str], run: RunOptions) -> list[tuple[str, ...]]:
    """Environments per job of render, golden and check: enough jobs to keep every worker busy, few enough that
    each worker reads the charts and templates once for many environments."""
    size = max(1, min(RENDER_BATCH, math.ceil(len(names) / (run.worker_count() * 2))))
    return [tuple(names[i:i + size]) for i in range(0, len(names), size)]


def _target(project: Project, command: str) -> Path:
    return project.rendered_dir if command == "render" else project.golden_dir


def _run_job(job: _Job, context: _Context | None = None) -> _Outcome:
    """A job's environments, each a result or the problems that stopped it (reported together by the caller)."""
    if context is None:  # in a worker process
        project = Project(job.root)
        # every command that runs jobs compares destinations (the main process put the peers in `shared`)
        context = _Context(project, CompileCache(project, job.cache, job.options, shared=job.shared))
        context._peers = job.peers  # computed once by the main process, never again per job
    if job.command == "lint":
        return _lint_batch(context, job)
    if job.command == "review":
        return _review_batch(context, job)
    results: list[EnvironmentResult] = []
    problems: list[Problem] = []
    rendered = _rendered_together(context, job.names)
    for name in job.names:
        try:
            result = _write_or_compare(context, job, name, rendered.pop(name, None))
        except KrcError as err:
            problems.extend(err.problems)
            continue
        results.append(result)
    return _Outcome(tuple(results), tuple(problems))


def _write_or_compare(context: _Context, job: _Job, name: str,
                      rendered: tuple[str, Render] | None) -> EnvironmentResult:
    """render/golden: one environment staged beside its target; check: compared with golden/."""
    project = context.project
    compiled, _ = _compile(project, context.cache, name, peers=context.peers, rendered=rendered)
    errors = _errors(compiled)
    if errors:
        raise KrcError(errors)
    result = EnvironmentResult(name, compiled.key, compiled.chart, len(compiled.objects), 0, compiled.findings,
                               not compiled.from_cache)
    if job.command in ("render", "golden"):
        chart = context.chart(*compiled.chart)
        result = dataclasses.replace(result, crds=len(chart.crds))
        if (job.skip_keys or {}).get(name) == compiled.key:
            return result
        files = compiled.files
        if job.command == "render":
            files = dict(sorted({**files, **output.crd_files(chart)}.items()))
        return dataclasses.replace(result, staged=output.stage_tree(_target(project, job.command) / name, files))
    golden = output.read_tree(project.golden_dir / name)
    return dataclasses.replace(result, mismatch=_mismatch(name, compiled.files, golden))


def _parallel(jobs: Sequence[_Job], run: RunOptions, is_cheap: Callable[[_Job], bool],
              context: _Context) -> Iterator[_Outcome]:
    """Every job's outcome, in order. Cheap jobs (cache hits) run here; the rest in worker processes when there
    are two or more of them, each started fresh ('spawn': the Go runtime of gojsonnet does not survive a fork)."""
    heavy = [i for i, job in enumerate(jobs) if not is_cheap(job)]
    workers = min(run.worker_count(), len(heavy))
    if workers < 2:
        yield from (_run_job(job, context) for job in jobs)
        return
    spawn = multiprocessing.get_context("spawn")
    lock = spawn.Lock()
    _use_engine_lock(lock)  # this process runs cheap jobs meanwhile
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=spawn, initializer=_use_engine_lock,
                                 initargs=(lock,)) as pool:
            futures = {i: pool.submit(_run_job, dataclasses.replace(jobs[i], peers=context.peers)) for i in heavy}
            for i, job in enumerate(jobs):
                future = futures.pop(i, None)
                yield future.result() if future is not None else _run_job(job, context)
    finally:
        _use_engine_lock(None)


# One CUE engine run at a time across the worker processes of a command: an engine process takes 150-250 MB
# whatever the batch, so parallel runs would double the peak memory for little time (see README).
_ENGINE_LOCK: list[Any] = [None]


def _use_engine_lock(lock: Any) -> None:
    _ENGINE_LOCK[0] = lock


def _engine_turn() -> Any:
    return _ENGINE_LOCK[0] if _ENGINE_LOCK[0] is not None else contextlib.nullcontext()


def _outcomes(context: _Context, jobs: Sequence[_Job], run: RunOptions) -> Iterator[EnvironmentResult]:
    """Results of every job, in order; every problem of every environment at the end, as one KrcError."""
    project, cache = context.project, context.cache
    problems: list[Problem] = []

    def cheap(job: _Job) -> bool:
        if not all(cache.has_entry(name) for name in job.names):
            return False
        if job.command != "lint" or job.engine is None:
            return True
        policies = policy_files(project.policies_dir)
        return all(cache.has_policy_entry(cache.policy_key(cache.key(name), policies, job.engine.description))
                   for name in job.names)

    for outcome in _parallel(jobs, run, cheap, context):
        problems.extend(outcome.problems)
        yield from outcome.results
    if problems:
        # a shared template or layer fails the same way for every environment: say it once
        raise KrcError(sorted_problems(set(problems)))


def _write_environments(project: Project, names: Sequence[str], command: str,
                        run: RunOptions) -> list[EnvironmentResult]:
    """rendered/<env>/ (render) or golden/<env>/ (golden) of every environment: each staged beside its target as
    soon as it is compiled, all swapped in only once every one compiled cleanly. rendered/<env>/ folders that
    already hold the result and were not touched since are left as they are."""
    with output.project_lock(project):  # one writer per project: concurrent runs wait instead of racing
        return _write_environments_locked(project, names, command, run)


def _write_environments_locked(project: Project, names: Sequence[str], command: str,
                               run: RunOptions) -> list[EnvironmentResult]:
    target = _target(project, command)
    for name in names:  # real folders inside the project only, never through a link
        project.checked_output_dir(target / name)
    output.clean_debris(target)  # what an interrupted run left beside its targets
    stamps = OutputStamps(target, run.cache) if command == "render" else None
    context = _Context.of(project, run)
    jobs = [_Job(command, project.root, group, run.cache, context.cache.shared,
                 skip_keys={n: k for n in group if (k := stamps.current(n))} if stamps else None)
            for group in _groups(names, run)]
    results: list[EnvironmentResult] = []
    try:
        for result in _outcomes(context, jobs, run):
            results.append(result)
    except BaseException:
        output.discard_staged([(target / r.name, r.staged) for r in results if r.staged])
        raise
    output.commit_staged([(target / r.name, r.staged) for r in results if r.staged])
    if stamps is not None:
        stamps.record({r.name: r.key for r in results if r.staged})
    return results


def render_to_disk(project: Project, names: Sequence[str], run: RunOptions = DEFAULT_RUN) -> list[EnvironmentResult]:
    """rendered/<env>/ for every environment, written only once all of them compiled cleanly."""
    return _write_environments(project, names, "render", run)


def accept_golden(project: Project, names: Sequence[str], run: RunOptions = DEFAULT_RUN) -> list[EnvironmentResult]:
    """golden/<env>/ becomes the current render, CRD lock included, for environments without error-level
    findings: lint errors stop the compile, and policy violations are refused here too unless the environment
    lowers the policy in `lint.rules` with a reason. Nothing is written when any environment is refused."""
    refused = [p for found in _policies_by_environment(project, names, run).values() for p in found
               if p.severity == "error"]
    if refused:
        raise KrcError([*dict.fromkeys(refused), Problem(
            "golden/ not updated: fix the findings above, or lower a policy for one environment with "
            "lint.rules.policy/<name>: {severity: warning, reason: ...} in its file")])
    return _write_environments(project, names, "golden", run)


def _mismatch(name: str, current: output.Files, golden: output.Files, orphaned: bool = False) -> GoldenMismatch:
    removed = tuple(sorted(golden.keys() - current.keys()))
    return GoldenMismatch(name, tuple(sorted(p for p in current.keys() & golden.keys() if current[p] != golden[p])),
                          tuple(sorted(current.keys() - golden.keys())), removed, orphaned,
                          tuple(review.pruned_objects(name, golden, removed)))


def compare_with_golden(render: Render, golden_dir: Path) -> GoldenMismatch:
    name = render.environment.name
    return _mismatch(name, output.render_files(render, include_crds=False), output.read_tree(golden_dir / name))


def _covers_all(project: Project, names: Sequence[str]) -> bool:
    """Removed environments are reported when every environment is compared (no names, or all of them)."""
    return set(names) >= set(project.environment_names())


def _removed_environments(project: Project, source: WorkingTreeGolden | GitGolden) -> list[str]:
    return sorted(set(source.environments()) - set(project.environment_names()))


def check_golden(project: Project, names: Sequence[str], run: RunOptions = DEFAULT_RUN) -> list[GoldenMismatch]:
    """Each environment's render against golden/, then every golden/<env>/ whose environment file is gone."""
    context = _Context.of(project, run)
    jobs = [_Job("check", project.root, group, run.cache, context.cache.shared) for group in _groups(names, run)]
    mismatches = [r.mismatch for r in _outcomes(context, jobs, run) if r.mismatch is not None]
    if _covers_all(project, names):
        source = review.golden_source(project, None)
        mismatches += [_mismatch(name, {}, source.files(name), orphaned=True)
                       for name in _removed_environments(project, source)]
    return mismatches


def review_project(project: Project, names: Sequence[str], base: str | None = None,
                   run: RunOptions = DEFAULT_RUN) -> review.Review:
    """`krc diff`: the named environments against golden/ (the working tree, or as committed at `base`), each
    with Ray's view of its capacity, and each changed one with its checks (lint and policy findings) and its
    capacity against the limits policies state; with every environment selected, also the environments golden/
    has and environments/ no longer has."""
    source = review.golden_source(project, base)
    context = _Context.of(project, run)
    size = max(1, min(REVIEW_BATCH, math.ceil(len(names) / run.worker_count())))
    jobs = [_Job("review", project.root, tuple(names[i:i + size]), run.cache, context.cache.shared,
                 golden={n: source.files(n) for n in names[i:i + size]} if base else None)
            for i in range(0, len(names), size)]
    results = [r for r in _outcomes(context, jobs, run) if r.reviewed is not None]
    reviews = {r.name: r.reviewed for r in results if r.reviewed is not None}
    changed = [r for r in results if r.reviewed is not None and r.reviewed.changed]
    policies = _policies_by_environment(project, [r.name for r in changed], run)
    for result in changed:
        assert result.reviewed is not None
        reviews[result.name] = review.with_checks(result.reviewed, [*result.findings, *policies.get(result.name, [])])
    if _covers_all(project, names):
        for name in _removed_environments(project, source):
            reviews[name] = review.removed_environment(name, source.files(name))
    return review.Review(source.description, base, tuple(reviews[name] for name in sorted(reviews)))


def approve_crd_upgrade(project: Project, name: str, reason: str, base: str | None = None) -> review.ApprovalWritten:
    """`krc approve ENV --reason TEXT`: approvals/<env>.crd-upgrade.yaml for the environment's current CRD
    change (against golden/ in the working tree, or as committed at `base`)."""
    review.check_reason(reason)
    source = review.golden_source(project, base)
    [render] = compile_environments(project, [name])
    env_review = review.review_environment(project, render, source.files(name))
    return review.write_approval(project.root, env_review.gate, name, reason, source.description)


def _review_batch(context: _Context, job: _Job) -> _Outcome:
    """`krc diff` of a batch of environments: each one's review against golden, with Ray's view before and after
    from one generator process for the batch."""
    project = context.project
    problems: list[Problem] = []
    entries: list[tuple[Compiled, Render, output.Files]] = []
    for name in job.names:
        try:
            compiled, render = _compile(project, context.cache, name, peers=context.peers)
        except KrcError as err:
            problems.extend(err.problems)
            continue
        errors = _errors(compiled)
        if errors:
            problems.extend(errors)
            continue
        golden = job.golden[name] if job.golden is not None else output.read_tree(project.golden_dir / name)
        entries.append((compiled, render or _restore(context, compiled), golden))
    if problems:
        return _Outcome(problems=tuple(problems))
    try:
        limits = capacity_limits(project.policies_dir, project.relative)
        stored_after = [[o.document for o in validate_render(r).context.objects] for _, r, _ in entries]
        stored_before = [after if golden == c.files else _stored_golden(r, golden)
                         for (c, r, golden), after in zip(entries, stored_after, strict=True)]
        versions = [ray_version(r.environment) for _, r, _ in entries] * 2
        batches = [Batch(v, tuple(d)) for v, d in zip(versions, stored_after + stored_before, strict=True)]
        views = autoscaler_views(project.root, batches)  # after and before: one generator process
        results = []
        for (compiled, render, golden), view, old, old_view in zip(entries, views[:len(entries)], stored_before,
                                                                    views[len(entries):], strict=True):
            production = render.environment.data.get("production") is True
            reviewed = review.review_environment(project, render, golden, limits=[
                limit for limit in limits if limit.applies(production)], current=compiled.files)
            reviewed = dataclasses.replace(reviewed, ray_view=two_views(
                [o.document for o in render.objects], view, before=(old, old_view)))
            results.append(EnvironmentResult(compiled.name, compiled.key, compiled.chart, len(compiled.objects), 0,
                                             compiled.findings, not compiled.from_cache, reviewed=reviewed))
    except KrcError as err:
        return _Outcome(problems=err.problems)
    return _Outcome(tuple(results))


def _stored_golden(render: Render, files: output.Files) -> list[dict[str, Any]]:
    """golden's Ray objects as the API server stores them under the render's CRDs (so Ray's view before and
    after compare like with like); files krc diff itself reports as unreadable are left out here."""
    shown = f"golden/{render.environment.name}"
    objects = []
    for path, content in sorted(files.items()):
        if not path.startswith(f"{output.MANIFESTS_DIR}/"):
            continue
        try:
            document = yamlio.load(content.decode("utf-8"), f"{shown}/{path}")
        except (KrcError, UnicodeDecodeError):
            continue
        if isinstance(document, dict) and str(document.get("apiVersion", "")).startswith("ray.io/"):
            objects.append(LintObject(document, Location(f"{shown}/{path}")))
    context = LintContext(tuple(objects), render.chart.version, {}, render.chart)
    return [o.document for o in validate_objects(context)[0].objects]




def explain(project: Project, name: str, path: str) -> explaining.Explanation:
    """`krc explain`: an environment value (with its layers or krc's default), or a rendered field
    (`Kind/name:field`, with its template and the environment line behind it)."""
    project.select([name])
    if explaining.is_rendered_path(path):
        result = explaining.explain_rendered(compile_environment(project, name), path)
        kind, _, field = result.path.partition(":")
        # credentials are shown as *** (files keep them)
        return dataclasses.replace(result, value=redact_at(field, result.value, kind.split("/", 1)[0]))
    result = explaining.explain_environment(load_environment(project, name), path)
    return dataclasses.replace(result, value=redact_at(result.path, result.value))


@dataclass(frozen=True)
class AutoscalerNodes:
    environment: str
    ray_version: str
    clusters: tuple[ClusterRows, ...]


def autoscaler_nodes(project: Project, names: Sequence[str], cluster: str = "") -> list[AutoscalerNodes]:
    """`krc autoscaler ENV... [--cluster NAME]`: every cluster's (or the named object's) node types as Ray's
    autoscaler sees them, beside Kubernetes' figures. A Ray version without its generator is bad input (exit 2)
    saying how to install it, and so is a cluster name no environment renders."""
    renders = compile_environments(project, project.select(list(names)), lint=False)
    views = autoscaler_of(project, [validate_render(r) for r in renders])
    missing = [Problem(view.unavailable, r.environment.location_of(("ray", "version")))
               for r, view in zip(renders, views, strict=True) if view.unavailable]
    if missing:
        raise KrcError(sorted_problems(set(missing)))
    found = [AutoscalerNodes(r.environment.name, view.ray_version, tuple(cluster_rows(
        (o.document for o in r.objects if not cluster or (o.document.get("metadata") or {}).get("name") == cluster),
        view))) for r, view in zip(renders, views, strict=True)]
    if cluster and not any(env.clusters for env in found):
        raise KrcError(f"no RayCluster, RayJob, RayService or RayCronJob named '{cluster}' in "
                       f"{', '.join(r.environment.name for r in renders)}; run 'krc autoscaler' to list them")
    return found


def ray_versions(project: Project) -> list[str]:
    """The Ray versions the environments name (`make ray-generators` installs one generator for each); a value
    that is not a release version is left to `krc lint` to report, never handed to a shell or pip."""
    versions = {ray_version(load_environment(project, name)) for name in project.environment_names()}
    return sorted(v for v in versions if valid_ray_version(v))


# ---- lint and policies ---------------------------------------------------------------------------------------

def _looks_like_path(target: str) -> bool:
    return "/" in target or target.endswith((".yaml", ".yml", ".json")) or target in (".", "..")


def lint_targets(targets: Sequence[str], project_root: Path | None = None, kuberay_version: str | None = None,
                 feature_gates: str = "", cwd: Path | None = None, argocd_crds: str | None = None,
                 run: RunOptions = DEFAULT_RUN) -> list[Problem]:
    """`krc lint`: paths when every target exists on disk, else environment names (none given: every
    environment). `argocd_crds` (a CRD file or folder) also validates Argo CD objects: in paths, and over each
    environment's own `argocd.crds`."""
    cwd = cwd or Path.cwd()
    paths = [cwd / t for t in targets]
    exists = [p.exists() for p in paths]
    if targets and all(exists):
        context = paths_context(paths, kuberay_version, feature_gates, cwd)
        return lint_objects(dataclasses.replace(context, extra_crds=argocd_crds) if argocd_crds else context)
    missing = [t for t, e in zip(targets, exists, strict=True) if not e and _looks_like_path(t)]
    if missing:
        raise KrcError(f"{missing[0]} does not exist; pass existing YAML files or directories")
    if any(exists):
        raise KrcError("pass either paths or environment names, not both; lint them in two runs")
    if kuberay_version or feature_gates:
        raise KrcError("--kuberay-version and --feature-gates apply to paths; an environment pins its chart and "
                       "sets operator.featureGates")
    return sorted_problems(lint_environments(find_project(project_root or cwd), targets, argocd_crds, run))


def lint_environments(project: Project, names: Sequence[str], argocd_crds: str | None = None,
                      run: RunOptions = DEFAULT_RUN) -> list[Problem]:
    """Every finding of each environment: schema and rules over what it renders, its Argo CD objects against
    the Argo CD CRDs it names, and the organisation's policies. Every environment's input errors are reported
    together."""
    return _policy_and_lint(project, project.select(names), run, argocd_crds, with_findings=True)


def _policy_and_lint(project: Project, names: Sequence[str], run: RunOptions, argocd_crds: str | None,
                     with_findings: bool, engine: CueEngine | None = None, settings: bool = True) -> list[Problem]:
    """Batches of environments, each compiled (or taken from the cache) and put through the policies in one
    engine run for what the policy cache lacks; batches run in parallel. Without a CUE engine the other findings
    are still reported, plus an error saying the policies were not checked: a CI job without the engine must not
    pass as if they had been."""
    if not names:
        return []
    extra: list[Problem] = []
    if engine is None and policy_files(project.policies_dir):
        try:
            engine = find_engine([project.root])
        except KrcError as err:
            extra.append(Problem(f"the policies in policies/ were not checked: {err.problems[0].message}",
                                 Location(project.relative(project.policies_dir)), "error", "policy/engine"))
    size = max(1, min(POLICY_BATCH, math.ceil(len(names) / run.worker_count())))
    options = _argocd_option(argocd_crds)
    context = _Context.of(project, run, options)
    jobs = [_Job("lint", project.root, tuple(names[i:i + size]), run.cache, context.cache.shared, options,
                 argocd_crds, findings=with_findings, engine=engine, policy_settings=settings)
            for i in range(0, len(names), size)]
    findings = [f for result in _outcomes(context, jobs, run) for f in result.findings]
    return findings + extra


def _policies_by_environment(project: Project, names: Sequence[str], run: RunOptions) -> dict[str, list[Problem]]:
    """The policies' findings of each environment (its `lint.rules` settings for policies applied); without a
    CUE engine, each environment gets the error that its policies were not checked."""
    if not names or not policy_files(project.policies_dir):
        return {}
    try:
        engine = find_engine([project.root])
    except KrcError as err:
        missing = Problem(f"the policies in policies/ were not checked: {err.problems[0].message}",
                          Location(project.relative(project.policies_dir)), "error", "policy/engine")
        return {name: [missing] for name in names}
    size = max(1, min(POLICY_BATCH, math.ceil(len(names) / run.worker_count())))
    context = _Context.of(project, run)
    jobs = [_Job("lint", project.root, tuple(names[i:i + size]), run.cache, context.cache.shared,
                 findings=False, engine=engine) for i in range(0, len(names), size)]
    return {result.name: list(result.findings) for result in _outcomes(context, jobs, run)}


def _lint_batch(context: _Context, job: _Job) -> _Outcome:
    """One batch of `krc lint` / `krc policy`: each environment's findings, policies from the policy cache or
    one engine run for the environments it lacks."""
    project, cache = context.project, context.cache
    policies = policy_files(project.policies_dir) if job.engine is not None else []
    results: list[EnvironmentResult] = []
    pending: list[tuple[int, Compiled, Render | None, str]] = []
    problems: list[Problem] = []
    compiled_names: list[str] = []
    renders: list[Render | None] = []
    compiled_of: list[Compiled] = []
    for name in job.names:
        try:
            compiled, render = _compile(project, cache, name, job.argocd_crds, lint=job.findings, peers=context.peers)
        except KrcError as err:
            problems.extend(err.problems)
            continue
        compiled_of.append(compiled)
        if render is not None:
            compiled_names.append(name)
        renders.append(render)
        results.append(EnvironmentResult(name, compiled.key, compiled.chart, len(compiled.objects), 0, (),
                                         render is not None))
        if policies and job.engine is not None:
            key = cache.policy_key(compiled.key, policies, job.engine.description)
            cached = cache.policy_findings(key)
            if cached is None:
                pending.append((len(results) - 1, compiled, render, key))
            else:
                try:
                    kept = _policy_settings(context, job, render or _restore(context, compiled), cached)
                except KrcError as err:
                    problems.extend(err.problems)
                    continue
                results[-1] = dataclasses.replace(results[-1], findings=tuple(kept))
    if problems:
        return _Outcome(problems=tuple(problems))
    if job.findings:
        # lint: the findings with Ray's autoscaler view (one generator process for the batch, answers cached
        # per cluster by the autoscaler stage), which `krc render` does not need and the compile cache lacks
        try:
            renders = [render or _restore(context, compiled_of[i]) for i, render in enumerate(renders)]
            validated = [validate_render(render, context.peers) for render in renders if render is not None]
            views = autoscaler_of(project, validated)
            for i, (entry, view) in enumerate(zip(validated, views, strict=True)):
                found = tuple(validated_findings(entry, project, job.argocd_crds, view))
                results[i] = dataclasses.replace(results[i], findings=found + results[i].findings)
        except KrcError as err:
            return _Outcome(problems=err.problems)
    if pending:
        try:
            inputs = [policy_input(renders[index] or _restore(context, compiled)) for index, compiled, _, _ in pending]
            with _engine_turn():
                per_input = evaluate_each(project.policies_dir, inputs, engine=job.engine,
                                          show_path=project.relative)
        except KrcError as err:
            return _Outcome(problems=err.problems)
        for (index, compiled, render, key), policy_found in zip(pending, per_input, strict=True):
            cache.store_policy_findings(key, policy_found)
            try:
                kept = _policy_settings(context, job, render or _restore(context, compiled), policy_found)
            except KrcError as err:
                return _Outcome(problems=err.problems)
            results[index] = dataclasses.replace(results[index], findings=results[index].findings + tuple(kept))
    return _Outcome(tuple(results), compiled=tuple(compiled_names))


def _policy_settings(context: _Context, job: _Job, render: Render, found: Sequence[Problem]) -> list[Problem]:
    """An environment may lower a policy like a lint rule (`lint.rules.policy/<name>`, with a reason); `krc
    policy` itself reports every violation."""
    if not job.policy_settings:
        return list(found)
    policy_ids = {f"policy/{p.stem}" for p in policy_files(context.project.policies_dir)}
    return with_policy_settings(render, found, policy_ids)


@dataclass(frozen=True)
class PolicyCheck:
    policies: tuple[str, ...]
    environments: tuple[str, ...]
    findings: tuple[Problem, ...]


def check_policies(project: Project, names: Sequence[str] = (), engine: CueEngine | None = None,
                   run: RunOptions = DEFAULT_RUN) -> PolicyCheck:
    """`krc policy [ENV...]`: the policies in policies/ over what the environments render."""
    policies = policy_files(project.policies_dir)
    selected = project.select(tuple(names))
    if not policies:
        return PolicyCheck((), tuple(selected), ())
    engine = engine or find_engine([project.root])  # before compiling: no engine means nothing to do
    # policies judge what the environment renders; lint findings are `krc lint`'s to report
    problems = _policy_and_lint(project, selected, run, None, with_findings=False, engine=engine, settings=False)
    return PolicyCheck(tuple(p.stem for p in policies), tuple(selected), tuple(sorted_problems(problems)))


# ---- CRDs and Argo CD ----------------------------------------------------------------------------------------

def compare_crd_sources(old: str, new: str, project_root: Path | None) -> list[crddiff.CrdChange]:
    """`krc crd-diff OLD NEW`: every change between two CRD sets (files, folders, chart archives, NAME@VERSION)."""
    return crddiff.compare_crds(crddiff.load_crd_source(old, project_root),
                                crddiff.load_crd_source(new, project_root))


def validate_argocd(project: Project, names: Sequence[str], override: str | None) -> list[Problem]:
    """`krc argocd validate`: every environment's Argo CD objects against the named or configured CRDs."""
    problems: list[Problem] = []
    for render in compile_environments(project, project.select(list(names)), lint=False):
        if override is None and crds_path(project, render.environment) is None:
            raise KrcError(f"environment {render.environment.name} names no Argo CD CRDs: pass --crds or set "
                           "argocd.crds")
        problems.extend(environment_problems(project, render.environment, render.objects, override))
    return problems


def argocd_generate(project: Project, environ: Mapping[str, str], options: Mapping[str, str | None],
                    argocd_crds: str | None = None, run: RunOptions = DEFAULT_RUN) -> argocd.Generated:
    """`krc argocd generate`: one environment compiled and checked as for `krc render` (error-level findings
    raise), then the documents the plugin request selects. It reads or compiles that environment only."""
    request = argocd.read_request(environ, options)
    name = argocd.chosen_environment(project, request)
    # the plugin renders one environment and reads no other (destinations are lint's and review's business)
    context = _Context.of(project, run, _argocd_option(argocd_crds), with_peers=False)
    compiled, render = _compile(project, context.cache, name, argocd_crds)
    errors = _errors(compiled)
    if errors:
        raise KrcError(errors)
    return argocd.generated(dataclasses.replace(render or _restore(context, compiled), findings=compiled.findings),
                            request)


def argocd_init(project: Project, environ: Mapping[str, str],
                options: Mapping[str, str | None]) -> list[vendor.VendorResult]:
    """`krc argocd init`: vendor the charts generate needs: the chosen environment's, or every environment's
    when none is chosen. Already vendored charts that match the lock are not downloaded again."""
    request = argocd.read_request(environ, options)
    names = [argocd.chosen_environment(project, request)] if request.environment else project.environment_names()
    return vendor_charts(project, names)


# ---- the everyday commands: envs, show, init, --version ---------------------------------------------------------

def list_environments(project: Project) -> list[inventory.EnvironmentSummary]:
    """`krc envs`: every environment with its layers, destination and chart (loaded, not rendered)."""
    return [inventory.summarize(load_environment(project, name)) for name in project.environment_names()]


def show_environment(project: Project, name: str, kinds: tuple[str, ...]) -> list[dict[str, object]]:
    """`krc show`: the objects one environment renders (validated and linted as by render), some kinds only."""
    [render] = compile_environments(project, project.select([name]))
    objects = inventory.select_objects(render, kinds)
    if kinds and not objects:
        raise KrcError(Problem(f"environment {name} renders no {', '.join(kinds)}",
                               help=f"kinds it renders: {', '.join(inventory.known_kinds(render))}"))
    return objects


def init_environment(project: Project, name: str, extends: str, destination: str | None,
                     namespace: str | None) -> Path:
    """`krc init`: a new environment file extending `extends`, checked by loading it; nothing is left behind
    when it does not load."""
    if not scaffold.ENVIRONMENT_NAME.match(name):
        raise KrcError(Problem(f"'{shown_name(name)}' is not a usable environment name",
                               help="use lowercase letters, digits and '-', e.g. staging or prod-eu"))
    path = project.environment_file(name)  # checks the name again before it becomes a path
    if path.exists():
        raise KrcError(Problem(f"{project.relative(path)} already exists", help="choose another name, or edit it"))
    if extends not in project.layer_names():
        close = difflib.get_close_matches(extends, project.layer_names(), n=1, cutoff=0.5)
        raise KrcError(Problem(f"there is no environment or layer '{extends}' to extend",
                               help=f"did you mean --extends {close[0]}?" if close else
                               f"extend one of: {', '.join(project.layer_names())}"))
    text = scaffold.new_environment(name, extends, destination, namespace)
    with path.open("x", encoding="utf-8") as handle:  # never replaces a file that appeared meanwhile
        handle.write(text)
    try:
        load_environment(project, name)
    except KrcError:
        path.unlink()
        raise
    return path


def versions(project: Project | None) -> list[tuple[str, str]]:
    """`krc --version`: krc and the engines it would use here."""
    return inventory.tool_versions(cue_on_path() or wasm_engine([project.root] if project else []))


def describe_rule(project: Project | None, rule_id: str) -> str:
    """`krc rules ID`: a lint rule's document, or `policy/NAME`: the policy file policies/NAME.cue."""
    if not rule_id.startswith("policy/"):
        return describe(rule_id)
    name = rule_id.removeprefix("policy/")
    known = sorted(p.stem for p in project.policies_dir.glob("*.cue")) if project else []
    if name not in known:  # also keeps the name inside policies/: only listed files are read
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
        raise KrcError(Problem(f"no policy '{name}' in policies/",
                               help=f"did you mean 'policy/{close[0]}'?" if close else
                               f"policies: {', '.join('policy/' + k for k in known) or 'none'}"))
    assert project is not None
    path = project.policies_dir / f"{name}.cue"
    return f"policy/{name}  (error; CUE policy {project.relative(path)}, checked by krc policy and krc lint)\n\n" \
           + path.read_text(encoding="utf-8")


def rule_list(project: Project | None) -> list[tuple[str, str, str]]:
    """`krc rules`: every lint rule, then the project's policies, as (id, severity, summary)."""
    policies = sorted(project.policies_dir.glob("*.cue")) if project else []
    return summaries() + [(f"policy/{p.stem}", "error", _policy_summary(p)) for p in policies]


def _policy_summary(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("//"):
            return line.removeprefix("//").strip()
    return "organisation policy"
