"""The review: diff (the render against golden/, object by object, in every report format) and approve.
"""
from __future__ import annotations

import sys

import click

from .. import pipeline, review
from ..diagnostics.report_format import plural
from .edge import run_options, run_settings
from .support import complete_environments, current_project, working


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
    settings = run_settings(no_cache, jobs)
    pipeline.start_engine_ahead(project, names, settings, roomy=False)  # Ray's generator runs beside it
    with working(f"rendering {plural(len(names), 'environment')}"):
        result = pipeline.review_project(project, names, base, settings)
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
