"""The daily loop: vendor, render, golden, check, diff and approve.
"""
from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from .. import pipeline, review
from ..diagnostics.report_format import plural
from ..pipeline.context import EnvironmentResult
from ..project import printable
from .edge import reports_errors, run_options, run_settings
from .support import (
    complete_environments,
    current_project,
    working,
)


@click.command("vendor", short_help="Download the pinned charts into vendor/.")
@click.argument("environments", nargs=-1, shell_complete=complete_environments)
@reports_errors
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


@click.command("render", short_help="Render environments into rendered/<env>/.")
@click.argument("environments", nargs=-1, shell_complete=complete_environments)
@run_options
@reports_errors
def render_command(environments: tuple[str, ...], no_cache: bool, jobs: int | None) -> None:
    """Render environments (default: all) into rendered/<env>/, validated and linted; nothing is written
    unless every environment compiles.

    \b
    Example:
      krc render dev
    """
    project = current_project()
    names = project.select(environments)
    with working(f"rendering {plural(len(names), 'environment')}"):
        results = pipeline.render_to_disk(project, names, run_settings(no_cache, jobs))
    for result in results:
        click.echo(f"rendered {result.name}: {plural(result.objects, 'object')}, "
                   f"{plural(result.crds, 'CRD')} of {result.chart[0]} {result.chart[1]}")
    accepted_warnings(results, "rendered/")


@click.command("golden", short_help="Accept the current render into golden/.")
@click.argument("environments", nargs=-1, shell_complete=complete_environments)
@run_options
@reports_errors
def golden_command(environments: tuple[str, ...], no_cache: bool, jobs: int | None) -> None:
    """Accept the current render into golden/<env>/ (CRD lock included); commit golden/ with the change.

    \b
    Example:
      krc diff dev && krc golden dev
    """
    project = current_project()
    names = project.select(environments)
    with working(f"rendering {plural(len(names), 'environment')}"):
        results = pipeline.accept_golden(project, names, run_settings(no_cache, jobs))
    for result in results:
        if result.staged is not None:
            click.echo(f"golden/{result.name} updated")
    current = sum(result.staged is None for result in results)
    if current:
        click.echo(f"{plural(current, 'environment')} already current in golden/")
    accepted_warnings(results, "golden/")


def accepted_warnings(results: Sequence[EnvironmentResult], folder: str) -> None:
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


@click.command("check", short_help="Exit 1 when golden/ differs from the render (CI).")
@click.argument("environments", nargs=-1, shell_complete=complete_environments)
@run_options
@reports_errors
def check_command(environments: tuple[str, ...], no_cache: bool, jobs: int | None) -> None:
    """Compare the render with golden/; list differing files and exit 1 when any differ.

    \b
    Example:
      krc check            # in CI: is golden/ current?
    """
    project = current_project()
    names = project.select(environments)
    with working(f"rendering {plural(len(names), 'environment')}"):
        mismatches = [m for m in pipeline.check_golden(project, names, run_settings(no_cache, jobs)) if not m.clean]
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


@click.command("diff", short_help="Review the render against golden/, object by object.")
@click.argument("environments", nargs=-1, shell_complete=complete_environments)
@click.option("--format", "output_format", type=click.Choice(list(review.FORMATS)), default="text",
              show_default=True, help="Output format (markdown: a pull-request comment; html: one self-contained "
              "page).")
@click.option("--base", metavar="REF", help="Compare with golden/ as committed at git REF (e.g. origin/main).")
@click.option("--output", "outputs", metavar="FORMAT=FILE", multiple=True,
              help="Also write the report in FORMAT to FILE (repeatable; any folder you can write, never "
                   "through a link inside the project), from the same compile: "
                   "--output json=\"$RUNNER_TEMP/krc-review.json\" --output text=krc-review.txt.")
@run_options
@reports_errors
def diff_command(environments: tuple[str, ...], output_format: str, base: str | None,
                 outputs: tuple[str, ...], no_cache: bool, jobs: int | None) -> None:
    """Review the render against golden/ object by object, CRD upgrade gate first; exit 1 on any change.

    \b
    Examples:
      krc diff dev
      krc diff --base origin/main --format markdown > review.md
      krc diff --base origin/main --format markdown --output json=review.json --output text=review.txt
    """
    project = current_project()
    targets = review.report_targets(project, outputs, review.FORMATS)  # all checked before anything is compiled
    names = project.select(environments)
    with working(f"rendering {plural(len(names), 'environment')}"):
        result = pipeline.review_project(project, names, base, run_settings(no_cache, jobs))
    for target in targets:  # every format from the one review
        review.write_report(target, review.format_review(result, target.format).encode("utf-8"))
    click.echo(review.format_review(result, output_format), nl=False)
    sys.exit(result.exit_code)


@click.command("approve", short_help="Approve ENV's breaking CRD upgrade: write approvals/ENV.crd-upgrade.yaml.")
@click.argument("environment", shell_complete=complete_environments)
@click.option("--reason", required=True, help="Why the breaking CRD changes are safe and how the CRDs are applied "
              "first (reviewed with the pull request).")
@click.option("--base", metavar="REF", help="The change against golden/ as committed at git REF (needed once "
              "'krc golden' has run: e.g. origin/main).")
@reports_errors
def approve_command(environment: str, reason: str, base: str | None) -> None:
    """Write approvals/ENV.crd-upgrade.yaml approving ENV's current breaking CRD upgrade.

    \b
    Examples:
      krc approve prod-eks-gpu --reason "CRDs applied server-side before the operator; no object uses workloadRef"
      krc approve prod-eks-gpu --base origin/main --reason "..."
    """
    project = current_project()
    project.select([environment])
    written = pipeline.approve_crd_upgrade(project, environment, reason, base)
    click.echo(f"wrote {written.file}: approves {environment} {written.from_version} -> {written.to_version} "
               f"({'; '.join(written.blocking)}); commit it with the pull request")
