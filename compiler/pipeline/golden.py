"""`krc render`, `krc golden` and `krc check`: rendered/ and golden/ written all-or-nothing, and compared.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from .. import pipeline
from ..diagnostics.problems import KrcError, Problem
from ..native import client
from ..output import folders, layout
from ..project.lock import project_lock
from ..project.paths import Project
from ..render.templates import Render
from ..results.output_stamps import OutputStamps
from ..review.golden_source import GitGolden, WorkingTreeGolden, golden_source
from .compile_ahead import compile_few_ahead
from .context import Context, charts_ahead, golden_mismatch
from .jobs import outcomes
from .plans import AcceptPlan, Checked, CheckPlan, GoldenMismatch, Job, RenderPlan, Written
from .run_options import DEFAULT_RUN, RENDER_BATCH, RunOptions
from .work import Work


def write_environments(project: Project, names: Sequence[str], work: Work, run: RunOptions) -> list[Written]:
    """rendered/<env>/ (render) or golden/<env>/ (golden) of every environment: each staged beside its target as
    soon as it is compiled, all swapped in only once every one compiled cleanly. rendered/<env>/ folders that
    already hold the result and were not touched since are left as they are."""
    # one writer per project: concurrent runs wait instead of racing; no Ray generator runs beside the engine
    with project_lock(project), client.roomy_engine():
        return _write_environments_locked(project, names, work, run)


def _write_environments_locked(project: Project, names: Sequence[str], work: Work,
                               run: RunOptions) -> list[Written]:
    target = work.output_root(project)
    project.checked_output_dirs(target, names)  # real folders inside the project only, never through a link
    folders.clean_debris(target)  # what an interrupted run left beside its targets
    # first: a few edited environments have the engine compile their charts' CRDs from here on (Context.of), which
    # is what a command compiling a few waits for last
    context = Context.of(project, run, workers=run.workers_for(work, len(names)))
    stamps = OutputStamps(target, run.cache) if work is Work.RENDER else None
    charts_ahead(context, names)  # compiled by the engine while the rendered/ folders are checked
    held: dict[str, str] = {}
    if stamps is not None:  # the rendered/ folders checked on a thread while the few to compile compile
        checked = stamps.checked_in_background(names)
        compile_few_ahead(context, names, run)
        held = checked()
    jobs = [Job(RenderPlan({n: held[n] for n in group if n in held}) if stamps is not None else AcceptPlan(),
                project.root, group, run.cache, context.cache.shared)
            for group in run.batches(names, RENDER_BATCH)]
    results: list[Written] = []
    try:
        for result in outcomes(context, jobs, run, Written):
            results.append(result)
    except BaseException:
        folders.discard_staged([(target / r.name, r.staged) for r in results if r.staged])
        raise
    client.engine_done()  # what is left is writing
    folders.commit_staged([(target / r.name, r.staged) for r in results if r.staged])
    if stamps is not None:
        stamps.record({r.name: r.key for r in results if r.staged})
    return results


def render_to_disk(project: Project, names: Sequence[str], run: RunOptions = DEFAULT_RUN) -> list[Written]:
    """rendered/<env>/ for every environment, written only once all of them compiled cleanly."""
    return write_environments(project, names, Work.RENDER, run)


def accept_golden(project: Project, names: Sequence[str], run: RunOptions = DEFAULT_RUN) -> list[Written]:
    """golden/<env>/ becomes the current render, CRD lock included, for environments without error-level
    findings: lint errors stop the compile, and policy violations are refused here too unless the environment
    lowers the policy in `lint.rules` with a reason. Nothing is written when any environment is refused; a
    golden/<env>/ that already holds exactly the render is left as it is (its result has no `staged` folder)."""
    policies = pipeline.policies_by_environment(project, names, run)  # loaded by golden alone, not by render
    refused = [p for found in policies.values() for p in found if p.severity == "error"]
    if refused:
        raise KrcError([*dict.fromkeys(refused), Problem(
            "golden/ not updated: fix the findings above, or lower a policy for one environment with "
            "lint.rules.policy/<name>: {severity: warning, reason: ...} in its file")])
    # the policies' warnings are accepted with the render too: the result carries them beside the lint findings
    return [dataclasses.replace(r, findings=(*r.findings, *policies.get(r.name, ())))
            for r in write_environments(project, names, Work.GOLDEN, run)]


def compare_with_golden(render: Render, golden_dir: Path) -> GoldenMismatch:
    name = render.environment.name
    return golden_mismatch(name, layout.render_files(render, include_crds=False), folders.read_tree(golden_dir / name))


def covers_all(project: Project, names: Sequence[str]) -> bool:
    """Removed environments are reported when every environment is compared (no names, or all of them)."""
    return set(names) >= set(project.environment_names())


def removed_environments(project: Project, source: WorkingTreeGolden | GitGolden) -> list[str]:
    return sorted(set(source.environments()) - set(project.environment_names()))


def check_golden(project: Project, names: Sequence[str], run: RunOptions = DEFAULT_RUN) -> list[GoldenMismatch]:
    """Each environment's render against golden/, then every golden/<env>/ whose environment file is gone."""
    with client.roomy_engine():  # no Ray generator runs beside the engine
        context = Context.of(project, run, workers=run.workers_for(Work.CHECK, len(names)))
        jobs = [Job(CheckPlan(), project.root, group, run.cache, context.cache.shared)
                for group in run.batches(names, RENDER_BATCH)]
        mismatches = [r.mismatch for r in outcomes(context, jobs, run, Checked)]
    client.engine_done()  # what is left is reading golden/ and reporting
    if covers_all(project, names):
        source = golden_source(project, None)
        mismatches += [golden_mismatch(name, {}, source.files(name), orphaned=True)
                       for name in removed_environments(project, source)]
    return mismatches
