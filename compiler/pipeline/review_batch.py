"""The worker side of `krc diff`: one batch of environments reviewed against golden, with Ray's view.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from .. import output, review, yamlio
from ..autoscaler import Batch, autoscaler_views
from ..compile_cache import Compiled
from ..lint import (
    LintContext,
    LintObject,
    validate_objects,
)
from ..policy.limits import capacity_limits
from ..problems import KrcError, Location, Problem
from ..render import Render
from ..review.ray_view import two_views
from .context import Context, EnvironmentResult, Job, Outcome, compile_cached, error_findings, restore
from .environments import ray_version, validate_render


def review_batch(context: Context, job: Job) -> Outcome:
    """`krc diff` of a batch of environments: each one's review against golden, with Ray's view before and after
    from one generator process for the batch."""
    project = context.project
    problems: list[Problem] = []
    entries: list[tuple[Compiled, Render, output.Files]] = []
    for name in job.names:
        try:
            compiled, render = compile_cached(project, context.cache, name, peers=context.peers)
        except KrcError as err:
            problems.extend(err.problems)
            continue
        errors = error_findings(compiled)
        if errors:
            problems.extend(errors)
            continue
        golden = job.golden[name] if job.golden is not None else output.read_tree(project.golden_dir / name)
        entries.append((compiled, render or restore(context, compiled), golden))
    if problems:
        return Outcome(problems=tuple(problems))
    try:
        limits = capacity_limits(project.policies_dir, project.relative)
        stored_after = [[o.document for o in validate_render(r).context.objects] for _, r, _ in entries]
        stored_before = [after if golden == c.files else stored_golden(r, golden)
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
        return Outcome(problems=err.problems)
    return Outcome(tuple(results))


def stored_golden(render: Render, files: output.Files) -> list[dict[str, Any]]:
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
