"""`krc diff`'s checks compared with the base: which lint findings and policy results are new, which resolved.

The base is the project as committed at `--base REF`, or at HEAD when the review is against golden/ in the
working tree. Its environments, templates, policies and chart lock are read from git into a private folder (the
vendored charts and Ray's generators beside them, linked, never downloaded), and checked by the same lint and
policy run as the working tree: a policy added in the change that production already breaks is a new error,
though no object changed. When the base's inputs are the working tree's, its findings are the working tree's:
nothing runs.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..autoscaler.generators import RAY_ENVS_DIR
from ..diagnostics.problems import KrcError, Problem
from ..policy import find_engine, policy_files
from ..project.paths import Project
from ..review.golden_source import git_project_files
from .context import Context
from .jobs import outcomes
from .plans import Job, Linted, LintPlan
from .run_options import RunOptions

# what decides an environment's findings, as committed (vendor/charts/ is not: its archives are linked)
INPUT_FOLDERS = ("environments", "templates", "policies", "vendor")
CHARTS = "vendor/charts"
MISSING_GENERATOR = "autoscaler/generator"


@dataclass(frozen=True)
class BaseChecks:
    """What the base found per environment; `findings` is None when the checks were not compared (`note` says
    why) and equal to the working tree's when its inputs are."""

    description: str  # "HEAD (0123456789ab)"
    findings: dict[str, tuple[Problem, ...]] | None
    same_inputs: bool = False
    note: str = ""


def _working_files(project: Project) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for folder in INPUT_FOLDERS:
        base = project.root / folder
        for path in sorted(base.rglob("*")) if base.is_dir() else ():
            relative = path.relative_to(project.root).as_posix()
            if path.is_file() and not path.is_symlink() and not relative.startswith(f"{CHARTS}/"):
                files[relative] = path.read_bytes()
    return files


def findings_of(project: Project, names: Sequence[str], run: RunOptions) -> dict[str, tuple[Problem, ...]]:
    """Every lint finding and policy result of each environment, as `krc lint` finds them."""
    if not names:
        return {}
    engine = find_engine() if policy_files(project.policies_dir) else None
    context = Context.of(project, run)
    jobs = [Job(LintPlan(findings=True, engine=engine), project.root, batch, run.cache, context.cache.shared)
            for batch in run.batches(names, run.policy_batch)]
    # a Ray generator missing on this machine is the machine's finding, not the change's (`krc lint` reports it)
    return {result.name: tuple(p for p in result.findings if p.rule != MISSING_GENERATOR)
            for result in outcomes(context, jobs, run, Linted)}


def _write(root: Path, files: dict[str, bytes], charts: Path, ray_envs: Path) -> None:
    for relative, content in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    (root / CHARTS).mkdir(parents=True, exist_ok=True)
    for archive in sorted(charts.glob("*")) if charts.is_dir() else ():
        if archive.is_file() and not archive.is_symlink():
            try:
                os.link(archive, root / CHARTS / archive.name)
            except OSError:  # another file system: a copy
                shutil.copyfile(archive, root / CHARTS / archive.name)
    if ray_envs.is_dir():  # Ray's autoscaler generators, installed beside the project, serve the base as well
        (root / RAY_ENVS_DIR).symlink_to(ray_envs.resolve(), target_is_directory=True)


def base_checks(project: Project, names: Sequence[str], base: str | None, run: RunOptions) -> BaseChecks:
    """The base's findings of `names` (those it has); not compared, with a note, when the project is not in git
    (without --base) or the base's own inputs do not compile."""
    ref = base or "HEAD"
    try:
        commit, files = git_project_files(project.root, ref, INPUT_FOLDERS)
    except KrcError:
        if base:
            raise
        return BaseChecks("", None, note="checks not compared with a base: the project is not in a git checkout "
                          "with a commit (HEAD)")
    description = f"{ref} ({commit[:12]})"
    if files == _working_files(project):
        return BaseChecks(description, None, same_inputs=True)
    with tempfile.TemporaryDirectory(prefix="krc-base-") as folder:
        root = Path(folder)
        _write(root, files, project.vendor_dir / "charts", project.root / RAY_ENVS_DIR)
        there = Project(root)
        try:
            known = set(there.environment_names())
            return BaseChecks(description, findings_of(there, [n for n in names if n in known], run))
        except KrcError as err:
            return BaseChecks(description, None, note=f"checks not compared with {description}: its environments "
                              f"do not compile ({err.problems[0].message})")
