"""`krc diff` and `krc approve`: the review of what changed against golden/.
"""
from __future__ import annotations

from collections.abc import Sequence

from .. import review
from ..project import Project
from .context import Context, Job
from .environments import compile_environments
from .golden import covers_all, removed_environments
from .jobs import outcomes
from .linting import policies_by_environment
from .policies_ahead import drop_policies_ahead, keep_policies_ahead
from .run_options import DEFAULT_RUN, RunOptions


def review_project(project: Project, names: Sequence[str], base: str | None = None,
                   run: RunOptions = DEFAULT_RUN) -> review.Review:
    """`krc diff`: the named environments against golden/ (the working tree, or as committed at `base`), each
    with Ray's view of its capacity, and each changed one with its checks (lint and policy findings) and its
    capacity against the limits policies state; with every environment selected, also the environments golden/
    has and environments/ no longer has."""
    source = review.golden_source(project, base)
    context = Context.of(project, run)
    # what the cache cannot answer goes first: its batch compiles it and starts its policies (start_policies_ahead),
    # which run while the other batches are answered from the cache (the reviews come out sorted by name)
    order = sorted(names, key=lambda name: context.cache.summary(name) is not None)
    jobs = [Job("review", project.root, batch, run.cache, context.cache.shared,
                golden={n: source.files(n) for n in batch} if base else None)
            for batch in run.batches(order, run.review_batch)]
    try:
        results = [r for r in outcomes(context, jobs, run) if r.reviewed is not None]
        keep_policies_ahead(context)  # the changed environments' policies, started by the review
    finally:
        drop_policies_ahead(context)
    reviews = {r.name: r.reviewed for r in results if r.reviewed is not None}
    changed = [r for r in results if r.reviewed is not None and r.reviewed.changed]
    policies = policies_by_environment(project, [r.name for r in changed], run, context)
    for result in changed:
        assert result.reviewed is not None
        reviews[result.name] = review.with_checks(result.reviewed, [*result.findings, *policies.get(result.name, [])])
    if covers_all(project, names):
        for name in removed_environments(project, source):
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
