"""The daily loop: vendor, render, golden and check. The review (diff, approve) is in review_commands.py, the only
CLI module that loads the review stage and its formatters.
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TypeVar

import click

from .. import pipeline
from ..diagnostics.report_format import plural
from ..pipeline.plans import Written
from ..pipeline.run_options import RunOptions
from ..project.paths import Project, printable
from .edge import run_options, run_settings
from .support import (
    complete_environments,
    current_project,
    working,
)

T = TypeVar("T")


@click.command("vendor", short_help="Download the pinned charts into vendor/.")
@click.argument("environments", nargs=-1, shell_complete=complete_environments)
def vendor_command(environments: tuple[str, ...]) -> None:
    """Download the charts the environments pin into vendor/ (checked against index and lock).

    \b
    Example:
      krc vendor
    """
    project = current_project()
    with working("downloading charts"):
        results = pipeline.vendor_charts(project, project.select(environments))
    for result in results:
        state = "downloaded" if result.downloaded else "cached"
        click.echo(f"{result.pin.name} {result.pin.version} sha256:{result.digest} ({state})")


def _environments_command(name: str, short_help: str) -> Callable[[Callable[..., None]], click.Command]:
    """The command line render, golden and check share: environment names (default: all) and the run options;
    bad input reported at the error edge (edge.ErrorEdge), as for every command."""
    def command(function: Callable[..., None]) -> click.Command:
        wrapped = run_options(function)
        names = click.argument("environments", nargs=-1, shell_complete=complete_environments)
        return click.command(name, short_help=short_help)(names(wrapped))
    return command


def _over_environments(environments: tuple[str, ...], no_cache: bool, jobs: int | None,
                       run: Callable[[], Callable[[Project, Sequence[str], RunOptions], T]]) -> T:
    """What render, golden and check share: one pipeline run over the named environments (all when none are
    named), under the progress line. `run` gives the pipeline function: it is looked up (and its modules loaded)
    once the engine was started ahead, which then comes up meanwhile."""
    project = current_project()
    names = project.select(environments)
    settings = run_settings(no_cache, jobs)
    pipeline.start_engine_ahead(project, names, settings, roomy=True)
    with working(f"rendering {plural(len(names), 'environment')}"):
        return run()(project, names, settings)


@_environments_command("render", "Render environments into rendered/<env>/.")
def render_command(environments: tuple[str, ...], no_cache: bool, jobs: int | None) -> None:
    """Render environments (default: all) into rendered/<env>/, validated and linted; nothing is written
    unless every environment compiles.

    \b
    Example:
      krc render dev
    """
    results = _over_environments(environments, no_cache, jobs, lambda: pipeline.render_to_disk)
    for result in results:
        click.echo(f"rendered {result.name}: {plural(result.objects, 'object')}, "
                   f"{plural(result.crds, 'CRD')} of {result.chart[0]} {result.chart[1]}")
    accepted_warnings(results, "rendered/")


@_environments_command("golden", "Accept the current render into golden/.")
def golden_command(environments: tuple[str, ...], no_cache: bool, jobs: int | None) -> None:
    """Accept the current render into golden/<env>/ (CRD lock included); commit golden/ with the change.

    \b
    Example:
      krc diff dev && krc golden dev
    """
    results = _over_environments(environments, no_cache, jobs, lambda: pipeline.accept_golden)
    for result in results:
        if result.staged is not None:
            click.echo(f"golden/{result.name} updated")
    current = sum(result.staged is None for result in results)
    if current:
        click.echo(f"{plural(current, 'environment')} already current in golden/")
    accepted_warnings(results, "golden/")


def accepted_warnings(results: Sequence[Written], folder: str) -> None:
    """What a render or golden accepted without stopping: each warning on stderr as one line, then their count
    per environment. Exit codes stay as they are: warnings never stop a render."""
    counts: dict[str, int] = {}
    for result in results:
        warnings = list(dict.fromkeys(p for p in result.findings if p.severity == "warning"))
        for problem in warnings:
            click.echo(problem.one_line(), err=True)
        if warnings:
            counts[result.name] = len(warnings)
    if counts:
        each = ", ".join(f"{name} {count}" for name, count in counts.items())
        click.echo(f"{plural(sum(counts.values()), 'warning')} accepted into {folder} ({each}); 'krc lint ENV' "
                   "lists them with the info findings", err=True)


@_environments_command("check", "Exit 1 when golden/ differs from the render (CI).")
def check_command(environments: tuple[str, ...], no_cache: bool, jobs: int | None) -> None:
    """Compare the render with golden/; list differing files and exit 1 when any differ.

    \b
    Example:
      krc check            # in CI: is golden/ current?
    """
    checked = _over_environments(environments, no_cache, jobs, lambda: pipeline.check_golden)
    mismatches = [m for m in checked if not m.clean]
    for mismatch in mismatches:
        if mismatch.orphaned:
            click.echo(f"orphaned: golden/{mismatch.environment}/ (environments/{mismatch.environment}.yaml is gone): "
                       f"deploying this removes the environment; if intended, delete golden/{mismatch.environment}/ "
                       "too, else restore the file")
            click.echo(f"  would be pruned ({len(mismatch.removed)} files):")
        for label, paths in (("changed", mismatch.changed), ("new", mismatch.added), ("gone", mismatch.removed)):
            for path in paths:
                click.echo(f"{label}: golden/{mismatch.environment}/{printable(path)}")
        for line in mismatch.pruned:
            click.echo(f"  pruned {line}")
    if mismatches:
        click.echo("golden/ differs from the render: review with 'krc diff', accept with 'krc golden'", err=True)
        sys.exit(1)
    click.echo("golden/ matches the render")
