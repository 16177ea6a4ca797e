"""Policies started ahead: `krc diff` starts the changed environments' policies as soon as a review batch has
rendered them (before their findings are worked out), so the engine works while the review goes on, and collects
the findings into the policy cache before its policy step, which then starts no engine of its own.

One such run at a time (the Context holds it), and none beside worker processes (Context.alone), so the command
keeps to one engine at a time. A failure is left to the policy step, which runs the policies again and reports it.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..diagnostics.problems import KrcError
from ..policy import find_engine, policy_files, policy_input
from ..render.templates import Render
from ..results.compile_cache import POLICIES
from .context import Context, PoliciesAhead
from .lint_batch import project_policy_run


def start_policies_ahead(context: Context, entries: Sequence[tuple[str, str, Render]]) -> None:
    """Start the policies of `entries` (each: its compile key, the digest of its inputs, its render) for
    keep_policies_ahead to collect: nothing when a run is under way, beside workers, or when there is nothing to
    run (no policies, results already kept, no engine installed)."""
    project = context.project
    policies = tuple(policy_files(project.policies_dir))
    if not entries or not policies or not context.alone or context.policies_ahead is not None:
        return
    try:
        engine = find_engine()
    except KrcError:
        return
    todo = [(render, key) for compile_key, inputs, render in entries
            if not context.cache.has_payload(POLICIES, key := context.cache.policy_key(
                compile_key, inputs, policies, engine.description))]
    if not todo:
        return
    run = project_policy_run(project, [policy_input(render) for render, _ in todo], engine)
    try:
        run.start()
    except KrcError:
        return
    context.policies_ahead = PoliciesAhead(run, tuple(key for _, key in todo))


def keep_policies_ahead(context: Context) -> None:
    """Wait for the run start_policies_ahead started and keep its findings in the policy cache."""
    ahead, context.policies_ahead = context.policies_ahead, None
    if ahead is None:
        return
    try:
        found = ahead.run.results()  # closes the run, whatever happens
    except KrcError:
        return  # the policy step runs these policies again and reports what stopped them
    for key, each in zip(ahead.keys, found, strict=True):
        context.cache.store_findings(POLICIES, key, each)


def drop_policies_ahead(context: Context) -> None:
    """Stop the run start_policies_ahead started (the command failed before it needed the findings)."""
    ahead, context.policies_ahead = context.policies_ahead, None
    if ahead is not None:
        ahead.run.close()
