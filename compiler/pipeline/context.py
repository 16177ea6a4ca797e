"""What the work on many environments shares: the per-command context (project, compile cache, charts read so
far), and the steps every plan takes per environment (rendered together, compiled or taken from the cache).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import review
from ..argocd.validation import crds_path
from ..charts import vendored
from ..charts.package import Chart
from ..diagnostics.problems import KrcError, Problem
from ..environment.model import Environment, load_environment
from ..k8s.destinations import Destination, peer_digests
from ..native import client
from ..output import folders, layout
from ..project.paths import Project
from ..render.templates import ObjectTemplate, Render, object_templates, prepare_templates, render_environment
from ..results.compile_cache import CompileCache
from ..results.compiled_records import Compiled, inputs_digest
from ..results.destination_cache import DestinationIndex
from . import workers_ahead
from .environments import (
    StartedValidation,
    Validated,
    chart_pin,
    compile_environment,
    project_destinations,
    start_validating,
    validate_render,
    validated_findings,
)
from .pinned_crds import send_pinned_crds
from .plans import GoldenMismatch
from .run_options import CHARTS_AHEAD_FOR, RunOptions

if TYPE_CHECKING:  # a compile names a policy run here; only the commands that run policies load its module
    from ..policy import PolicyRun


@dataclass(frozen=True)
class PoliciesAhead:
    """An engine run started for environments a later step of the command will ask about, so it works while the
    command does other work; `keys` are where its findings go in the policy cache, in the order of its inputs."""

    run: PolicyRun
    keys: tuple[str, ...]


class Context:
    """What one command's work shares, in one process: the project, its cache, the charts read so far."""

    def __init__(self, project: Project, cache: CompileCache, with_peers: bool = True, alone: bool = True):
        """`alone`: this process is the command's only one (no worker processes beside it), so work may start
        early and overlap other work (policies ahead, CUE beside Ray's generator) without adding to the memory
        several processes hold."""
        self.project = project
        self.cache = cache
        self.with_peers = with_peers
        self.alone = alone
        self._charts: dict[tuple[str, str], Chart] = {}
        self._peers: tuple[Destination, ...] | None = None
        self.policies_ahead: PoliciesAhead | None = None  # at most one engine run under way (policies_ahead)
        self.charts_ahead_done = False  # charts_ahead decided for this command (its first call does)
        self.failed_ahead: dict[str, KrcError] = {}  # compile_few_ahead's errors, for the jobs to report
        self.compiled_ahead: set[str] = set()  # what compile_few_ahead compiled (the jobs find it in the cache)

    @classmethod
    def of(cls, project: Project, run: RunOptions, options: str = "", with_peers: bool = True,
           workers: int = 1) -> Context:
        """With peers, findings compare each environment's destination with the others', so what each one reads of
        the others' destinations joins its cache key (its findings change when one it collides with moves).
        `workers`: the processes the command would compile in, were nothing cached; when most destinations must be
        read, its workers are started first (workers_ahead). When an environment file is new or changed since the
        last run (it will compile), the engine is started and the CRDs of the charts those files pin are sent to it:
        compiling them (a fifth of a second for KubeRay's four) is what a command compiling a few environments
        would otherwise wait for. A few files whose signatures changed (input_digests) are known before the
        destinations are read; the destinations name the files read anew again, and any others are sent then. The
        engine of a command compiling a few collects garbage late (client.start_engine); a few edited files mean a
        few compiles only when the last command rested on the same templates, charts and krc (the memo's basis)."""
        plain = CompileCache(project, run.cache)
        context = cls(project, plain, with_peers)  # given the cache with the peers' digests once they are read
        peers: tuple[Destination, ...] = ()
        changed: list[str] = []
        sent: list[str] = []  # the environments whose charts' CRDs went to the engine before the destinations
        few = True  # a few changed files mean a few compiles (else the workers send the CRDs, sharing schemas)
        if with_peers:
            names = project.environment_names()
            edited = plain.edited_environments(names)  # known before the destinations: their files' signatures
            few = plain.shares_last_basis()  # else every environment compiles, whichever files were edited
            if 0 < len(edited) <= CHARTS_AHEAD_FOR and few:
                client.start_engine(few=True)
                send_pinned_crds(context.project, edited)
                sent = edited
            index = DestinationIndex(plain)
            if workers > 1 and index.unread(names) * 2 >= len(names):
                workers_ahead.start(workers - 1, workers_ahead.worker_setup, project.vendor_dir)
            peers = project_destinations(project, index, names)
            plain.remember_digests()  # every environment file was hashed for its destination's key
            changed = index.read
            if changed:
                client.start_engine(few=few and len(changed) <= CHARTS_AHEAD_FOR)
        cache = CompileCache(project, run.cache, options, peers=peer_digests(peers), summary_index=True)
        cache.share_digests(plain)  # every environment file was just read for its destination
        context.cache = cache
        context._peers = peers
        if few and len(changed) <= CHARTS_AHEAD_FOR:
            send_pinned_crds(context.project, [name for name in changed if name not in sent])
        return context

    @property
    def peers(self) -> tuple[Destination, ...]:
        if self._peers is None:
            self._peers = project_destinations(self.project) if self.with_peers else ()
        return self._peers

    def chart(self, name: str, version: str) -> Chart:
        if (name, version) not in self._charts:
            self._charts[(name, version)] = vendored.load_vendored_chart(self.project.vendor_dir, name, version)
        return self._charts[(name, version)]


def missing_entries(context: Context, names: Sequence[str]) -> list[str]:
    """The environments among `names` the compile cache lacks: those the command will compile."""
    return [name for name in names if not context.cache.has_entry(name)]


def charts_ahead(context: Context, names: Sequence[str]) -> None:
    """Send the CRDs of the charts pinned by the environments the cache lacks to the engine now: it compiles them
    (tens of milliseconds per CRD) while this process checks the other environments and renders these, instead
    of when their objects are first validated. An environment whose pin does not read is left to its compile.
    Decided once per command, by the first call: `krc render` calls it before it checks rendered/, and every
    command's jobs (jobs.outcomes) again, which then asks the cache about no environment a second time."""
    if context.charts_ahead_done:
        return
    context.charts_ahead_done = True
    missing = missing_entries(context, names)
    if missing and len(missing) <= CHARTS_AHEAD_FOR:
        send_pinned_crds(context.project, missing)
    elif missing:  # many to compile, though a few edited files may have started the engine for a few (Context.of)
        client.collect_as_usual()


@dataclass(frozen=True)
class Rendered:
    """An environment rendered, not yet linted: its cache key as it was before rendering, the render, its files
    (as golden/ holds them) and the inputs it was read from ([path, sha256] pairs: its layers, the CRD file it
    names). Enough to start its policies (start_policies_ahead) before its findings are worked out."""

    key: str
    render: Render
    files: folders.Files | None  # None when the command writes and compares no files (rendered's `texts`)
    recorded: tuple[tuple[str, str], ...]  # its inputs, as CompileCache.recorded_inputs lists them
    inputs_digest: str
    validating: StartedValidation | None = None  # its objects under the engine's validation (rendered_together)


def rendered(project: Project, cache: CompileCache, key: str, render: Render, argocd_crds: str | None = None,
             texts: bool = True) -> Rendered:
    """`texts`: with its golden-layout files (every command but lint and policy, which write and compare none:
    compiled_files makes them later if another command needs them)."""
    try:
        named = crds_path(project, render.environment) if not argocd_crds else None
    except KrcError:  # its findings say so (or, without lint, nothing reads that file)
        named = None
    recorded = cache.recorded_inputs([project.root / f for f in render.environment.files] + ([named] if named else []))
    return Rendered(key, render, layout.render_files(render, False) if texts else None, recorded,
                    inputs_digest(recorded))


def rendered_together(context: Context, names: Sequence[str],
                      loaded: Callable[[list[Environment]], None] | None = None,
                      texts: bool = True) -> dict[str, Rendered | KrcError]:
    """The environments the cache lacks, rendered with their Jsonnet templates evaluated together
    (prepare_templates), each with its cache key as it was before rendering. An environment whose render failed
    gets its error, the one its own render reports (prepare_templates leaves the environments of a failed joint run
    to evaluate alone), for compile_cached to raise: rendering it again would cost a runaway template its time
    limit twice. Environments that fail before rendering are left out: compile_cached reports them as always.
    `loaded` is given the environments to render once they are loaded, before their templates are evaluated;
    `texts` as for `rendered`."""
    project, cache = context.project, context.cache
    keys, pairs = [], []
    found: dict[str, Rendered | KrcError] = {}
    for name in names:
        if name in context.failed_ahead:  # compiled ahead and failed: its error, not a second evaluation
            found[name] = context.failed_ahead.pop(name)
            continue
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
    if not pairs:  # every one is in the cache: no need to even list the templates
        return found
    if loaded is not None:
        loaded([env for env, _ in pairs])
    try:
        templates: tuple[ObjectTemplate, ...] | None = object_templates(project)  # once for the batch
    except KrcError:
        templates = None  # each environment's own render reports it where it always did (after its values)
    for key, (env, chart), prepared in zip(keys, pairs, prepare_templates(project, pairs, templates), strict=True):
        try:
            render = render_environment(project, env, chart, prepared, templates)
            # the engine judges this environment's objects while the next one renders (compile_validated waits)
            found[env.name] = dataclasses.replace(rendered(project, cache, key, render, texts=texts),
                                                  validating=start_validating(render))
        except KrcError as err:
            found[env.name] = err
    return found


def compile_cached(project: Project, cache: CompileCache, name: str, argocd_crds: str | None = None,
                   lint: bool = True, peers: tuple[Destination, ...] = (),
                   ahead: Rendered | KrcError | None = None) -> tuple[Compiled, Render | None]:
    """One environment's compiled result from the cache, else compiled (and kept when its key held still).
    With `lint`, findings that cannot be computed (bad lint settings) are bad input; without, they are left out.
    `ahead`: its render from rendered_together (made without `argocd_crds`), or the error that render raised."""
    compiled, render, _ = compile_validated(project, cache, name, argocd_crds, lint, peers, ahead)
    return compiled, render


def compile_validated(project: Project, cache: CompileCache, name: str, argocd_crds: str | None = None,
                      lint: bool = True, peers: tuple[Destination, ...] = (),
                      ahead: Rendered | KrcError | None = None, texts: bool = True) \
        -> tuple[Compiled, Render | None, Validated | None]:
    """compile_cached, with the render's objects as the API server stores them when it compiled them (None from
    the cache, or when its findings could not be computed): `krc lint` reads them again for Ray's view. `texts` as
    for `rendered` (a result from the cache may lack them too: compiled_files)."""
    found = cache.lookup(name)
    if found is not None:
        return found, None, None
    if isinstance(ahead, KrcError):
        raise ahead
    if ahead is None:
        key = cache.key(name)
        ahead = rendered(project, cache, key, compile_environment(project, name), argocd_crds, texts)
    render = ahead.render
    validated: Validated | None = None
    try:
        validated = validate_render(render, peers, ahead.validating)
        findings: list[Problem] | None = validated_findings(validated, project, argocd_crds)
    except KrcError:
        if lint:
            raise
        findings, validated = None, None
    compiled = Compiled(name, ahead.key, (render.chart.name, render.chart.version), ahead.files, render.objects,
                        render.helm_values, tuple(findings or ()), render.chart_objects,
                        inputs_digest=ahead.inputs_digest, crds=len(render.chart.crds),
                        recorded=ahead.recorded)
    if findings is not None and cache.key(name) == ahead.key:  # the file did not change while it compiled
        cache.store(compiled)
    return compiled, render, validated


def compiled_files(context: Context, compiled: Compiled) -> folders.Files:
    """Its golden-layout files: its own, or, when a command that writes none (lint, policy) compiled it, made from
    its objects as its render would have made them, and kept with its cache entry (so its summary answers the next
    command without the entry)."""
    if compiled.files is not None:
        return compiled.files
    files = layout.objects_files(compiled.objects, compiled.helm_values, context.chart(*compiled.chart),
                                 compiled.chart_objects, include_crds=False)
    if compiled.from_cache and context.cache.key(compiled.name) == compiled.key:  # its file held still
        context.cache.store(dataclasses.replace(compiled, files=files))
    return files


def restore(context: Context, compiled: Compiled) -> Render:
    """The full Render of a cached result (what provenance needs: the loaded environment with its origins)."""
    return Render(load_environment(context.project, compiled.name), context.chart(*compiled.chart),
                  compiled.helm_values, compiled.objects, compiled.findings, compiled.chart_objects)


def golden_mismatch(name: str, current: folders.Files, golden: folders.Files, orphaned: bool = False) -> GoldenMismatch:
    removed = tuple(sorted(golden.keys() - current.keys()))
    return GoldenMismatch(name, tuple(sorted(p for p in current.keys() & golden.keys() if current[p] != golden[p])),
                          tuple(sorted(current.keys() - golden.keys())), removed, orphaned,
                          _pruned(name, golden, removed))


def _pruned(name: str, golden: folders.Files, removed: tuple[str, ...]) -> tuple[str, ...]:
    """What deleting golden/'s removed objects does; the review's comparison is loaded only when there are some
    (compiler.review loads its names when first used)."""
    return tuple(review.pruned_objects(name, golden, removed)) if removed else ()
