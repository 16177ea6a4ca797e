"""The worker side of `krc lint` and `krc policy`: one batch of environments, findings and policies.
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..autoscaler import start_generators_ahead
from ..autoscaler.generators import installed_generators
from ..cache import CacheKind, cache_key
from ..diagnostics.problems import KrcError, Problem
from ..environment.model import Environment
from ..policy import CueEngine, PolicyInput, PolicyRun, policy_files, policy_input
from ..policy.inputs import with_policy_settings
from ..project.paths import Project
from ..render.templates import Render
from ..results.compile_cache import POLICIES
from ..results.compiled_records import Compiled, Summary, findings_digest
from .autoscaling import autoscaler_of
from .context import Context, compile_validated, rendered_together, restore
from .environments import Validated, findings_with_view, ray_version, validate_render
from .plans import Linted, LintPlan, Outcome

# Each environment's finished findings (`krc lint` / `krc policy`), kept in the compile cache's folder.
LINT_RESULTS = CacheKind("lint", 1)  # bump its version when what lint_key covers changes


@dataclass(frozen=True)
class LintBasis:
    """What every environment's lint result in a job depends on besides the environment itself (whose compile key
    already covers krc's code, templates/, vendor/ and the command's options): the command's flags, the Ray
    generators installed (Ray's view, or the error that it is missing), the policy files and their engine."""

    digest: str
    policies: tuple[Path, ...]  # none without an engine


def lint_basis(context: Context, plan: LintPlan) -> LintBasis:
    policies = tuple(policy_files(context.project.policies_dir)) if plan.engine is not None else ()
    parts = [f"findings={plan.findings}", f"settings={plan.policy_settings}",
             repr(installed_generators(context.project.root)) if plan.findings else "",
             plan.engine.description if plan.engine is not None else "",
             *(f"{p.name}:{context.cache.digest(p)}" for p in policies)]
    return LintBasis(cache_key(*parts), policies)


def lint_key(basis: LintBasis, compile_key: str, inputs: str, findings: Sequence[Problem]) -> str:
    """An environment's result under `basis`: its compiled result (key, every layer's bytes, its findings)."""
    return cache_key(basis.digest, compile_key, inputs, findings_digest(findings))


def _cached_places(context: Context, plan: LintPlan, basis: LintBasis, name: str) \
        -> tuple[Summary, list[tuple[CacheKind, str]]] | None:
    """The environment's summary and where its result may be kept: its lint entry, then, for `krc policy`
    (policies alone, no settings applied), its policy findings."""
    summary = context.cache.summary(name)
    if summary is None:
        return None
    places = [(LINT_RESULTS, lint_key(basis, summary.key, summary.inputs_digest, summary.findings))]
    if not plan.findings and not plan.policy_settings and plan.engine is not None:
        places.append((POLICIES, context.cache.policy_key(summary.key, summary.inputs_digest, basis.policies,
                                                          plan.engine.description)))
    return summary, places


def has_lint_result(context: Context, plan: LintPlan, basis: LintBasis, name: str) -> bool:
    found = _cached_places(context, plan, basis, name)
    return found is not None and any(context.cache.has_payload(kind, key) for kind, key in found[1])


def cached_lint_result(context: Context, plan: LintPlan, basis: LintBasis, name: str) -> Linted | None:
    """The environment's result from the cache (its summary and a list of findings: no full entry, no environment
    file parsed), or None."""
    found = _cached_places(context, plan, basis, name)
    if found is None:
        return None
    summary, places = found
    for kind, key in places:
        findings = context.cache.findings(kind, key)
        if findings is not None:
            return Linted(name, summary.key, summary.chart, summary.objects, tuple(findings), False)
    return None


def store_lint_results(context: Context, basis: LintBasis, results: Sequence[Linted],
                        compiled: dict[str, Compiled]) -> None:
    """Keep the results whose compiled result the compile cache kept as it is (a file that changed while it
    compiled, or findings that could not be computed, are not kept there, and so not here either)."""
    for result in results:
        if result.policies_pending:
            continue
        entry = compiled[result.name]
        summary = context.cache.summary(result.name)
        if summary is None or (summary.key, summary.inputs_digest) != (entry.key, entry.inputs_digest):
            continue
        context.cache.store_findings(LINT_RESULTS, lint_key(basis, entry.key, entry.inputs_digest, entry.findings),
                                     result.findings)


def lints_of_batch(context: Context, names: Sequence[str], plan: LintPlan) -> Outcome:
    """One batch of `krc lint` / `krc policy`: each environment's result from the lint cache, else its findings
    and policies (from the policy cache, or one engine run for the environments it lacks)."""
    basis = lint_basis(context, plan)
    known = {name: result for name in names if (result := cached_lint_result(context, plan, basis, name))}
    todo = [name for name in names if name not in known]
    outcome, compiled = _lint_names(context, plan, basis.policies, todo) if todo else (Outcome(), {})
    if outcome.problems:
        return outcome
    fresh = {result.name: result for result in outcome.results if isinstance(result, Linted)}
    store_lint_results(context, basis, list(fresh.values()), compiled)
    return Outcome(tuple({**known, **fresh}[name] for name in names), compiled=outcome.compiled)


def _start_generators(project_root: Path, environments: list[Environment]) -> None:
    """Ray's view of what a job compiles: the generators of the Ray versions its environments name, started once
    the job has loaded them (not read from their files a second time), import Ray while their templates are
    evaluated."""
    start_generators_ahead(project_root, {ray_version(env) for env in environments})


def _lint_names(context: Context, plan: LintPlan, policies: Sequence[Path], names: Sequence[str]) \
        -> tuple[Outcome, dict[str, Compiled]]:
    """The results of `names` (or the problems that stopped them), with the compiled result of each."""
    project, cache = context.project, context.cache
    results: list[Linted] = []
    pending: list[tuple[int, Compiled, Render | None, str]] = []
    problems: list[Problem] = []
    compiled_names: list[str] = []
    renders: list[Render | None] = []
    validations: list[Validated | None] = []  # of the renders compiled here, as their findings were worked out
    compiled_of: list[Compiled] = []
    # the environments the compile cache lacks, their templates evaluated in one Jsonnet run as render and review
    # evaluate them (the templates are parsed once per run), Ray's generators starting meanwhile; a render for
    # --argocd-crds records that file among its inputs, so those are compiled one by one (their generators start
    # when first asked)
    generators = functools.partial(_start_generators, project.root) if plan.findings else None
    ahead = rendered_together(context, names, generators, texts=False) if plan.argocd_crds is None else {}
    for name in names:
        try:
            compiled, render, validated = compile_validated(project, cache, name, plan.argocd_crds,
                                                            lint=plan.findings, peers=context.peers,
                                                            ahead=ahead.pop(name, None), texts=False)
        except KrcError as err:
            problems.extend(err.problems)
            continue
        compiled_of.append(compiled)
        if render is not None:
            compiled_names.append(name)
        renders.append(render)
        validations.append(validated)
        results.append(Linted(name, compiled.key, compiled.chart, compiled.object_count, (), render is not None))
        if policies and plan.engine is not None:
            key = policy_cache_key(context, compiled, policies, plan.engine)
            cached = cache.findings(POLICIES, key)
            if cached is None:
                pending.append((len(results) - 1, compiled, render, key))
            else:
                try:
                    kept = policy_settings(context, plan, render or restore(context, compiled), cached)
                except KrcError as err:
                    problems.extend(err.problems)
                    continue
                results[-1] = dataclasses.replace(results[-1], findings=tuple(kept))
    if problems:
        return Outcome(problems=tuple(problems)), {}
    if plan.defer_policies:  # the main process runs them at the end of the run (policies_after)
        for index, _, _, _ in pending:
            results[index] = dataclasses.replace(results[index], policies_pending=True)
        pending = []
    try:
        if plan.findings or pending:
            renders = [render or restore(context, compiled_of[i]) for i, render in enumerate(renders)]
        inputs = [policy_input(renders[index] or restore(context, compiled)) for index, compiled, _, _ in pending]
        with project_policy_run(project, inputs, plan.engine) as run:
            if inputs:
                run.start()  # CUE works in the engine while Ray's generator does (below)
            if plan.findings:
                _add_findings(context, renders, validations, compiled_of, results)
            per_input = run.results()
        for (index, compiled, render, key), policy_found in zip(pending, per_input, strict=True):
            results[index] = with_policy_findings(context, plan, results[index], render or restore(context, compiled),
                                                  key, policy_found)
    except KrcError as err:
        return Outcome(problems=err.problems), {}
    by_name = {result.name: entry for result, entry in zip(results, compiled_of, strict=True)}
    return Outcome(tuple(results), compiled=tuple(compiled_names)), by_name


def project_policy_run(project: Project, inputs: Sequence[PolicyInput], engine: CueEngine | None) -> PolicyRun:
    """An engine run of the project's policies, its messages naming files as the project shows them."""
    return PolicyRun(project.policies_dir, inputs, engine=engine, show_path=project.relative)


def policy_cache_key(context: Context, compiled: Compiled, policies: Sequence[Path], engine: CueEngine) -> str:
    return context.cache.policy_key(compiled.key, compiled.inputs_digest, policies, engine.description)


def _add_findings(context: Context, renders: Sequence[Render | None], validations: Sequence[Validated | None],
                  compiled_of: Sequence[Compiled], results: list[Linted]) -> None:
    """lint: each environment's findings with Ray's autoscaler view (one generator process for the batch, answers
    cached per cluster by the autoscaler stage), which `krc render` does not need and the compile cache lacks. The
    rules ask the view only about clusters an autoscaler reads, so the generator judges no other.
    The objects as stored are validated once: those of the renders compiled here come with them."""
    validated = [known or validate_render(render, context.peers)
                 for render, known in zip(renders, validations, strict=True) if render is not None]
    views = autoscaler_of(context.project, validated, autoscaled_only=True)
    for i, (entry, view, compiled) in enumerate(zip(validated, views, compiled_of, strict=True)):
        found = tuple(findings_with_view(entry, compiled.findings, view))
        results[i] = dataclasses.replace(results[i], findings=found + results[i].findings)


def with_policy_findings(context: Context, plan: LintPlan, result: Linted, render: Render, key: str,
                         found: Sequence[Problem]) -> Linted:
    """`result` with the policy findings an engine run just gave (kept in the policy cache under `key`), its
    environment's `lint.rules` settings for policies applied when the job asks; KrcError for bad settings."""
    context.cache.store_findings(POLICIES, key, found)
    kept = policy_settings(context, plan, render, found)
    return dataclasses.replace(result, findings=result.findings + tuple(kept), policies_pending=False)


def policy_settings(context: Context, plan: LintPlan, render: Render, found: Sequence[Problem]) -> list[Problem]:
    """An environment may lower a policy like a lint rule (`lint.rules.policy/<name>`, with a reason); `krc
    policy` itself reports every violation."""
    if not plan.policy_settings:
        return list(found)
    policy_ids = {f"policy/{p.stem}" for p in policy_files(context.project.policies_dir)}
    return with_policy_settings(render, found, policy_ids)
