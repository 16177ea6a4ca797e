"""`krc diff` and `krc approve`: the review of what changed against golden/.
"""
from __future__ import annotations

from collections.abc import Sequence

from .. import review
from ..diagnostics.problems import KrcError, Problem, sorted_problems
from ..native import client
from ..project.paths import Project
from ..review.golden_source import GitGolden, WorkingTreeGolden, golden_source
from .base_checks import base_checks, findings_of
from .context import Context
from .environments import compile_environments
from .golden import covers_all, removed_environments
from .jobs import outcomes
from .linting import policies_by_environment
from .plans import Job, Reviewed, ReviewPlan
from .policies_ahead import drop_policies_ahead, keep_policies_ahead
from .review_memo import ReviewMemo
from .run_options import DEFAULT_RUN, RunOptions


def review_project(project: Project, names: Sequence[str], base: str | None = None,
                   run: RunOptions = DEFAULT_RUN) -> review.Review:
    """`krc diff`: the named environments against golden/ (the working tree, or as committed at `base`), each
    with Ray's view of its capacity, and each changed one with its checks (lint and policy findings) and its
    capacity against the limits policies state; with every environment selected, also the environments golden/
    has and environments/ no longer has."""
    source = golden_source(project, base)
    # the review memo answers unchanged environments (golden/ of the working tree); those whose layers changed go
    # first, so the policies their batch starts (start_policies_ahead) run while the memo answers the others
    memo = ReviewMemo(project) if run.cache and base is None else None
    context = Context.of(project, run)
    if memo is not None:
        memo.bind(context)  # may drop every entry (another header)
    kept = {name for name in names if memo is not None and memo.layers_kept(name)}
    suspects, others = [n for n in names if n not in kept], [n for n in names if n in kept]
    results: list[Reviewed] = []  # reviewed in this run
    answered: list[Reviewed] = []  # from the memo
    problems: list[Problem] = []
    try:
        for group in (suspects, others):
            found = [r for r in (memo.answer(name) for name in group) if r is not None] if memo else []
            known = {r.name for r in found}
            try:
                results += _reviewed(context, source, [name for name in group if name not in known], base, run)
            except KrcError as err:
                problems += err.problems
            answered += found
        if problems:
            raise KrcError(sorted_problems(set(problems)))
        keep_policies_ahead(context)  # the changed environments' policies, started by the review
    finally:
        drop_policies_ahead(context)
    if memo is not None:
        for result in results:
            memo.record(result)
        memo.save(project.environment_names())
    results += answered
    reviews = {r.name: r.review for r in results}
    changed = [r for r in results if r.review.changed]
    policies = policies_by_environment(project, [r.name for r in changed], run, context)
    for result in changed:
        reviews[result.name] = review.with_checks(result.review, [*result.findings, *policies.get(result.name, [])])
    if covers_all(project, names):
        for name in removed_environments(project, source):
            reviews[name] = review.removed_environment(name, source.files(name))
    checked = base_checks(project, sorted(reviews), base, run)
    if checked.findings is not None:  # the base's inputs differ from the working tree's: compare the findings
        current = findings_of(project, [name for name in sorted(reviews) if not reviews[name].removed], run)
        for name in current:
            reviews[name] = review.with_check_changes(reviews[name], current[name], checked.findings.get(name, ()))
    client.engine_done()  # what is left is writing the review
    return review.Review(source.description, base, tuple(reviews[name] for name in sorted(reviews)),
                         checked.description if checked.findings is not None or checked.same_inputs else "",
                         checked.note)


def _reviewed(context: Context, source: WorkingTreeGolden | GitGolden, names: Sequence[str], base: str | None,
              run: RunOptions) -> list[Reviewed]:
    """The reviews of `names` in jobs; what the cache cannot answer goes first: its batch compiles it and starts
    its policies, which run while the other batches are answered from the cache."""
    order = sorted(names, key=lambda name: context.cache.summary(name) is not None)
    jobs = [Job(ReviewPlan({n: source.files(n) for n in batch} if base else None), context.project.root, batch,
                run.cache, context.cache.shared) for batch in run.batches(order, run.review_batch)]
    return list(outcomes(context, jobs, run, Reviewed))


def approve_crd_upgrade(project: Project, name: str, reason: str, base: str | None = None) -> review.ApprovalWritten:
    """`krc approve ENV --reason TEXT`: approvals/<env>.crd-upgrade.yaml for the environment's current CRD
    change (against golden/ in the working tree, or as committed at `base`)."""
    review.check_reason(reason)
    source = golden_source(project, base)
    [render] = compile_environments(project, [name])
    env_review = review.review_environment(project, render, source.files(name))
    return review.write_approval(project.root, env_review.gate, name, reason, source.description)
