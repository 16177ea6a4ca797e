"""Checks: lint, policy and crd-diff.
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import crddiff, pipeline
from ..diagnostics.problems import KrcError, has_errors
from ..diagnostics.report_format import plural, summary
from ..lint import report
from .edge import run_options, run_settings
from .support import (
    complete_environments,
    current_project,
    project_or_none,
    show_problems,
    working,
)


@click.command("crd-diff", short_help="Classify the changes between two CRD sets (breaking or not).")
@click.argument("old")
@click.argument("new")
@click.option("--format", "output_format", type=click.Choice(list(crddiff.FORMATS)), default="text",
              show_default=True, help="Output format.")
def crd_diff_command(old: str, new: str, output_format: str) -> None:
    """Compare the CRDs of OLD and NEW (each a CRD file, a directory, a chart .tgz or kuberay-operator@VERSION);
    exit 1 when a change is breaking.

    \b
    Example:
      krc crd-diff kuberay-operator@1.6.2 kuberay-operator@1.7.0
    """
    try:
        project_root: Path | None = current_project().root  # for its vendored charts, when there is a project
    except KrcError:
        project_root = None
    changes = pipeline.compare_crd_sources(old, new, project_root)
    click.echo(crddiff.format_changes(changes, output_format), nl=False)
    sys.exit(1 if crddiff.has_breaking(changes) else 0)


@click.command("policy", short_help="Check environments against the CUE policies in policies/.")
@click.argument("environments", nargs=-1, shell_complete=complete_environments)
@run_options
def policy_command(environments: tuple[str, ...], no_cache: bool, jobs: int | None) -> None:
    """Check environments (default: all) against the CUE policies in policies/; exit 1 on any violation.

    \b
    Example:
      krc policy prod-eks-gpu
    """
    project, settings = current_project(), run_settings(no_cache, jobs)
    pipeline.start_engine_ahead(project, environments, settings, roomy=True)
    with working("checking policies"):
        checked = pipeline.check_policies(project, environments, run=settings)
    policies, names, problems = checked.policies, checked.environments, checked.findings
    for problem in problems:
        click.echo(problem.one_line())
    line = (f"{plural(len(policies), 'policy')} on {plural(len(names), 'environment')}: "
            f"{plural(len(problems), 'violation')}")
    click.echo(line if policies else "no policies in policies/*.cue", err=True)
    sys.exit(1 if problems else 0)


@click.command("lint", short_help="Validate against the CRDs and run KubeRay's rules.")
@click.argument("targets", nargs=-1, shell_complete=complete_environments)
@click.option("--format", "output_format", type=click.Choice(list(report.FORMATS)), default="text",
              show_default=True, help="Output format.")
@click.option("--kuberay-version", help="Paths only: operator version whose CRDs and gates apply (default: newest).")
@click.option("--feature-gates", default="",
              help="Paths only: gate overrides, e.g. RayCronJob=true,RayClusterMTLS=false.")
@click.option("--argocd-crds", type=click.Path(exists=True), help="Argo CD's CRDs (file or folder): validate Argo CD "
              "objects too (environments: instead of their argocd.crds).")
@run_options
def lint_command(targets: tuple[str, ...], output_format: str, kuberay_version: str | None,
                 feature_gates: str, argocd_crds: str | None, no_cache: bool, jobs: int | None) -> None:
    """Lint environments (default: all) or YAML files and directories; exit 1 on any error-level finding.

    \b
    Examples:
      krc lint dev
      krc lint rendered/dev/manifests --format sarif > krc.sarif
    """
    root = click.get_current_context().find_root().params.get("project")
    settings, project = run_settings(no_cache, jobs), project_or_none()
    if project is not None:  # Ray's generator runs beside its engine
        pipeline.start_engine_ahead(project, targets, settings, roomy=False)
    with working("linting"):
        problems = pipeline.lint_targets(list(targets), Path(root) if root else None, kuberay_version, feature_gates,
                                         argocd_crds=argocd_crds, run=settings)
    if output_format == "text" and sys.stdout.isatty():
        show_problems(problems, err=False)  # a person reading: the source line and the fix under each finding
    else:
        click.echo(report.render(problems, output_format), nl=False)  # a pipe or a tool: one line per finding
    if output_format == "text":
        click.echo(summary(problems), err=True)
    sys.exit(1 if has_errors(problems) else 0)
