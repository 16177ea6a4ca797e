"""The worker side of `krc diff`: one batch of environments reviewed against golden, with Ray's view.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from .. import review
from ..autoscaler import Batch, autoscaler_views
from ..autoscaler.generators import installed_generators
from ..cache import CacheKind, cache_key
from ..diagnostics.problems import KrcError, Location, Problem, errors_among
from ..documents import yamlio
from ..documents.record_json import from_json, to_json
from ..lint import (
    LintContext,
    LintObject,
    validate_objects,
)
from ..output import folders, layout
from ..policy.limits import capacity_limits
from ..render.templates import Render
from ..results.compiled_records import Compiled, file_digests, findings_digest
from ..results.tree_digests import tree_digests
from ..review.pod_changes import with_pod_changes
from ..review.ray_view import two_views
from ..validation.server_updates import update_rejections
from .context import Context, Rendered, compile_cached, compiled_files, rendered, rendered_together, restore
from .environments import compile_environment, ray_version, validate_render
from .plans import Outcome, Reviewed, ReviewPlan
from .policies_ahead import start_policies_ahead

# Reviews of environments golden/ matches, kept in the compile cache's folder under their own kind and key.
# bump its version when the EnvironmentReview record or what review_key covers changes
REVIEWS = CacheKind("reviews", 3)


def reviews_of_batch(context: Context, names: Sequence[str], plan: ReviewPlan) -> Outcome:
    """`krc diff` of a batch of environments: each one's review against golden, with Ray's view before and after
    from one generator process for the batch. An environment that golden/ matches is answered from the review
    cache when its inputs are unchanged (see review_key): at scale, nearly every environment of a pull request."""
    project = context.project
    problems: list[Problem] = []
    entries: list[tuple[Compiled, Render, folders.Files, str]] = []
    cached: dict[str, Reviewed] = {}
    generators = repr(installed_generators(project.root))  # once per batch, not per environment

    def finish(name: str, golden: folders.Files, ahead: Rendered | None) -> None:
        """Its findings (or its compile cache entry), then its kept review or an entry to review."""
        try:
            compiled, render = compile_cached(project, context.cache, name, peers=context.peers, ahead=ahead)
        except KrcError as err:
            problems.extend(err.problems)
            return
        errors = errors_among(compiled.findings)
        if errors:
            problems.extend(errors)
            return
        files = compiled_files(context, compiled)
        compiled = dataclasses.replace(compiled, files=files)
        key = review_key(context, name, file_digests(files), compiled.inputs_digest, compiled.findings,
                         generators) if golden == files else ""
        reviewed = cached_review(context, key)
        if reviewed is not None:
            cached[name] = _result(compiled, reviewed)
        else:
            entries.append((compiled, render or restore(context, compiled), golden, key))

    pending: list[tuple[str, folders.Files]] = []  # what the summaries cannot answer, with golden/'s files
    for name in names:
        # golden/'s digests first (files read only when they changed: tree_digests); its bytes only when needed
        given = plan.golden[name] if plan.golden is not None else None  # golden/ as committed at --base
        folder = project.golden_dir / name
        digests = file_digests(given) if given is not None else tree_digests(folder, remember=context.cache.enabled)
        known = _review_from_summary(context, name, digests, generators)
        if known is not None:
            cached[name] = known
        else:
            pending.append((name, given if given is not None else folders.read_tree(folder)))
    # what the compile cache lacks is rendered first, the templates evaluated in one Jsonnet run; the policies of
    # those golden/ does not match start before their findings are worked out, so the engine has that time too
    together = rendered_together(context, [name for name, _ in pending])
    changed: list[tuple[str, folders.Files, Rendered]] = []
    for name, golden in pending:
        try:
            ahead = together.get(name)
            if isinstance(ahead, KrcError):
                raise ahead
            if ahead is None and not context.cache.has_entry(name):  # it failed before rendering: its own error
                ahead = rendered(project, context.cache, context.cache.key(name), compile_environment(project, name))
        except KrcError as err:
            problems.extend(err.problems)
            continue
        if ahead is not None and ahead.files != golden:
            changed.append((name, golden, ahead))  # held, as its entry would be
        else:
            finish(name, golden, ahead)
    if not problems:  # a batch that fails needs no policies
        start_policies_ahead(context, [(ahead.key, ahead.inputs_digest, ahead.render) for _, _, ahead in changed])
    for name, golden, ahead in changed:
        finish(name, golden, ahead)
    if problems:
        return Outcome(problems=tuple(problems))
    # changed environments the compile cache answered: their policies, unless a run already started for the others
    start_policies_ahead(context, [(c.key, c.inputs_digest, render) for c, render, golden, _ in entries
                                   if golden != c.files])
    try:
        results = _review_entries(context, entries)
    except KrcError as err:
        return Outcome(problems=err.problems)
    results += list(cached.values())
    order = {name: i for i, name in enumerate(names)}
    return Outcome(tuple(sorted(results, key=lambda r: order[r.name])))


def _result(compiled: Compiled, reviewed: review.EnvironmentReview) -> Reviewed:
    return Reviewed(compiled.name, compiled.key, compiled.chart, compiled.object_count, compiled.findings,
                    not compiled.from_cache, review=reviewed)


def _review_from_summary(context: Context, name: str, golden: dict[str, str], generators: str) \
        -> Reviewed | None:
    """The kept review of an environment whose golden/ (`golden`: its files' digests) holds exactly its compiled
    files, found from the small summary of its entry (no objects read); None sends it the long way (a compile or
    the full entry)."""
    summary = context.cache.summary(name)
    if summary is None or errors_among(summary.findings) or golden != summary.file_digests:
        return None
    reviewed = cached_review(context, review_key(context, name, summary.file_digests, summary.inputs_digest,
                                                 summary.findings, generators))
    if reviewed is None:
        return None
    return Reviewed(name, summary.key, summary.chart, summary.objects, summary.findings, False, review=reviewed)


def review_key(context: Context, name: str, files: dict[str, str], inputs: str, findings: Sequence[Problem],
               generators: str) -> str:
    """What the review of an environment golden/ matches depends on: krc's code, templates/ and vendor/ (the
    cache's shared digest), its compiled files (golden/'s bytes), every layer it was compiled from (settings such
    as `production` decide which policy limits apply without changing a byte of output), its findings, the
    policies (their capacity limits) and the Ray generators installed (`generators`: Ray's view, or why it is
    unavailable)."""
    parts = [context.cache.shared, name, repr(files), inputs, findings_digest(findings),
             context.cache.digest(context.project.policies_dir), generators]
    return cache_key(*parts)


def cached_review(context: Context, key: str) -> review.EnvironmentReview | None:
    payload = context.cache.read_payload(REVIEWS, key) if key else None
    if payload is None:
        return None
    try:
        found = from_json(review.EnvironmentReview, payload)
    except (ValueError, TypeError):
        return None
    return found if isinstance(found, review.EnvironmentReview) and not found.changed else None


def _review_entries(context: Context, entries: list[tuple[Compiled, Render, folders.Files, str]]) \
        -> list[Reviewed]:
    project = context.project
    if not entries:
        return []
    limits = capacity_limits(project.policies_dir, project.relative)
    stored_after = [[o.document for o in validate_render(r).context.objects] for _, r, _, _ in entries]
    stored_before = [after if golden == c.files else stored_golden(r, golden)
                     for (c, r, golden, _), after in zip(entries, stored_after, strict=True)]
    versions = [ray_version(r.environment) for _, r, _, _ in entries] * 2
    batches = [Batch(v, tuple(d)) for v, d in zip(versions, stored_after + stored_before, strict=True)]
    views = autoscaler_views(project.root, batches)  # after and before: one generator process
    results = []
    afters = iter(stored_after)
    for (compiled, render, golden, key), view, old, old_view in zip(entries, views[:len(entries)], stored_before,
                                                                     views[len(entries):], strict=True):
        production = render.environment.data.get("production") is True
        reviewed = review.review_environment(project, render, golden, limits=[
            limit for limit in limits if limit.applies(production)], current=compiled_files(context, compiled))
        reviewed = dataclasses.replace(reviewed, ray_view=two_views(
            [o.document for o in render.objects], view, before=(old, old_view)))
        after = next(afters)
        reviewed = with_pod_changes(reviewed, render, old, after)  # what each change does to KubeRay's Pods
        if key and not reviewed.changed:
            context.cache.write_payload(REVIEWS, key, to_json(reviewed))
        rejected = update_rejections(render.chart.crds, render.objects, golden) if reviewed.changed else []
        result = _result(compiled, reviewed)
        results.append(dataclasses.replace(result, findings=(*result.findings, *rejected)) if rejected else result)
    return results


def stored_golden(render: Render, files: folders.Files) -> list[dict[str, Any]]:
    """golden's Ray objects as the API server stores them under the render's CRDs (so Ray's view before and
    after compare like with like); files krc diff itself reports as unreadable are left out here."""
    shown = f"golden/{render.environment.name}"
    objects = []
    for path, content in sorted(files.items()):
        if not path.startswith(f"{layout.MANIFESTS_DIR}/"):
            continue
        try:
            document = yamlio.load(content.decode("utf-8"), f"{shown}/{path}")
        except (KrcError, UnicodeDecodeError):
            continue
        if isinstance(document, dict) and str(document.get("apiVersion", "")).startswith("ray.io/"):
            objects.append(LintObject(document, Location(f"{shown}/{path}")))
    context = LintContext(tuple(objects), render.chart.version, {}, render.chart)
    return [o.document for o in validate_objects(context)[0].objects]
