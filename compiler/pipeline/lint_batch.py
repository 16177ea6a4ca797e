"""The worker side of `krc lint` and `krc policy`: one batch of environments, findings and policies.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..compile_cache import Compiled
from ..policy import evaluate_each, policy_files, policy_input
from ..policy.inputs import with_policy_settings
from ..problems import KrcError, Problem
from ..render import Render
from .context import Context, EnvironmentResult, Job, Outcome, compile_cached, engine_turn, restore
from .environments import autoscaler_of, validate_render, validated_findings


def lint_batch(context: Context, job: Job) -> Outcome:
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
            compiled, render = compile_cached(project, cache, name, job.argocd_crds, lint=job.findings,
                                              peers=context.peers)
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
                    kept = policy_settings(context, job, render or restore(context, compiled), cached)
                except KrcError as err:
                    problems.extend(err.problems)
                    continue
                results[-1] = dataclasses.replace(results[-1], findings=tuple(kept))
    if problems:
        return Outcome(problems=tuple(problems))
    if job.findings:
        # lint: the findings with Ray's autoscaler view (one generator process for the batch, answers cached
        # per cluster by the autoscaler stage), which `krc render` does not need and the compile cache lacks
        try:
            renders = [render or restore(context, compiled_of[i]) for i, render in enumerate(renders)]
            validated = [validate_render(render, context.peers) for render in renders if render is not None]
            views = autoscaler_of(project, validated)
            for i, (entry, view) in enumerate(zip(validated, views, strict=True)):
                found = tuple(validated_findings(entry, project, job.argocd_crds, view))
                results[i] = dataclasses.replace(results[i], findings=found + results[i].findings)
        except KrcError as err:
            return Outcome(problems=err.problems)
    if pending:
        try:
            inputs = [policy_input(renders[index] or restore(context, compiled)) for index, compiled, _, _ in pending]
            with engine_turn():
                per_input = evaluate_each(project.policies_dir, inputs, engine=job.engine,
                                          show_path=project.relative)
        except KrcError as err:
            return Outcome(problems=err.problems)
        for (index, compiled, render, key), policy_found in zip(pending, per_input, strict=True):
            cache.store_policy_findings(key, policy_found)
            try:
                kept = policy_settings(context, job, render or restore(context, compiled), policy_found)
            except KrcError as err:
                return Outcome(problems=err.problems)
            results[index] = dataclasses.replace(results[index], findings=results[index].findings + tuple(kept))
    return Outcome(tuple(results), compiled=tuple(compiled_names))


def policy_settings(context: Context, job: Job, render: Render, found: Sequence[Problem]) -> list[Problem]:
    """An environment may lower a policy like a lint rule (`lint.rules.policy/<name>`, with a reason); `krc
    policy` itself reports every violation."""
    if not job.policy_settings:
        return list(found)
    policy_ids = {f"policy/{p.stem}" for p in policy_files(context.project.policies_dir)}
    return with_policy_settings(render, found, policy_ids)
