"""The command line: parse options, call one core function, report, choose the exit code.

Exit codes everywhere: 0 fine, 1 findings or differences, 2 bad input or a failing environment (disk, network,
permissions; nothing written), 3 an internal error. No traceback is printed unless KRC_DEBUG=1.
"""
from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from . import argocd, crddiff, pipeline, review, yamlio
from .autoscaler import report as autoscaler_report
from .lint import report
from .problems import KrcError, has_errors
from .project import Project, find_project, printable
from .rules import describe, summaries


def reports_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Bad input becomes one line per problem on stderr and exit status 2."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except KrcError as err:
            for problem in err.problems:
                click.echo(problem.one_line(), err=True)
            sys.exit(2)

    return wrapper


DEBUG_VARIABLE = "KRC_DEBUG"


def _debugging() -> bool:
    return os.environ.get(DEBUG_VARIABLE, "").strip() not in ("", "0", "false", "no")


class ErrorEdge(click.Group):
    """The one place where failures become exit codes, for every command and subcommand.

    KrcError (bad input): its problems, exit 2. OSError (disk full, read-only, permissions, network): one line,
    exit 2. Anything else is krc's bug: one line saying so, exit 3, the traceback only with KRC_DEBUG=1. Exit 1
    keeps its one meaning, findings or differences, so CI can tell a crash from a change.
    """

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException, SystemExit,
                KeyboardInterrupt):
            raise
        except KrcError as err:
            for problem in err.problems:
                click.echo(problem.one_line(), err=True)
            sys.exit(2)
        except OSError as err:
            if _debugging():
                raise
            where = f" ({err.filename})" if err.filename else ""
            click.echo(f"krc: error {err.strerror or err}{where}; check the disk, permissions and network, then "
                       "run again", err=True)
            sys.exit(2)
        except Exception as err:  # noqa: BLE001 - the edge: whatever escaped is an internal error
            if _debugging():
                raise
            click.echo(f"krc: internal error: {type(err).__name__}: {str(err)[:300]}; please report it, with the "
                       f"traceback from running again with {DEBUG_VARIABLE}=1", err=True)
            sys.exit(3)


def current_project() -> Project:
    """The project named by --project, else the one around the working directory."""
    ctx = click.get_current_context()
    root = ctx.find_root().params.get("project")
    return find_project(Path(root) if root else Path.cwd())


@click.group(cls=ErrorEdge, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--project", type=click.Path(file_okay=False), help="Project root (default: found from the cwd).")
def main(project: str | None) -> None:
    """krc: compile KubeRay environments into manifests, Helm values and CRDs; validate, lint and diff them."""


@main.command("vendor")
@click.argument("environments", nargs=-1)
@reports_errors
def vendor_command(environments: tuple[str, ...]) -> None:
    """Download the charts the environments pin into vendor/ (checked against index and lock)."""
    project = current_project()
    for result in pipeline.vendor_charts(project, project.select(environments)):
        state = "downloaded" if result.downloaded else "cached"
        click.echo(f"{result.pin.name} {result.pin.version} sha256:{result.digest} ({state})")


@main.command("render")
@click.argument("environments", nargs=-1)
@reports_errors
def render_command(environments: tuple[str, ...]) -> None:
    """Render environments (default: all) into rendered/<env>/."""
    project = current_project()
    for render in pipeline.render_to_disk(project, project.select(environments)):
        click.echo(f"rendered {render.environment.name}: {len(render.objects)} objects, "
                   f"{len(render.chart.crds)} CRDs of {render.chart.name} {render.chart.version}")
        if render.findings:
            click.echo(f"{render.environment.name}: {len(render.findings)} warnings or notes; "
                       f"see 'krc lint {render.environment.name}'", err=True)


@main.command("golden")
@click.argument("environments", nargs=-1)
@reports_errors
def golden_command(environments: tuple[str, ...]) -> None:
    """Accept the current render into golden/<env>/ (CRD lock included)."""
    project = current_project()
    for render in pipeline.accept_golden(project, project.select(environments)):
        click.echo(f"golden/{render.environment.name} updated")


@main.command("check")
@click.argument("environments", nargs=-1)
@reports_errors
def check_command(environments: tuple[str, ...]) -> None:
    """Compare the render with golden/; list differing files and exit 1 when any differ."""
    project = current_project()
    mismatches = [m for m in pipeline.check_golden(project, project.select(environments)) if not m.clean]
    for mismatch in mismatches:
        for label, paths in (("changed", mismatch.changed), ("new", mismatch.added), ("gone", mismatch.removed)):
            for path in paths:
                click.echo(f"{label}: golden/{mismatch.environment}/{printable(path)}")
    if mismatches:
        click.echo("golden/ differs from the render: review with 'krc diff', accept with 'krc golden'", err=True)
        sys.exit(1)
    click.echo("golden/ matches the render")


@main.command("diff")
@click.argument("environments", nargs=-1)
@click.option("--format", "output_format", type=click.Choice(["text", "markdown", "json"]), default="text",
              show_default=True, help="Output format (markdown: a pull-request comment).")
@click.option("--base", metavar="REF", help="Compare with golden/ as committed at git REF (e.g. origin/main).")
@reports_errors
def diff_command(environments: tuple[str, ...], output_format: str, base: str | None) -> None:
    """Review the render against golden/ object by object, CRD upgrade gate first; exit 1 on any change."""
    project = current_project()
    result = pipeline.review_project(project, project.select(environments), base)
    click.echo(review.format_review(result, output_format), nl=False)
    sys.exit(result.exit_code)


@main.command("explain")
@click.argument("environment")
@click.argument("path")
@reports_errors
def explain_command(environment: str, path: str) -> None:
    """Print the value at a dotted PATH of ENVIRONMENT and the files that set it."""
    result = pipeline.explain(current_project(), environment, path)
    click.echo(f"{result.environment}: {result.path} =")
    click.echo(yamlio.dump(result.value).rstrip("\n") if isinstance(result.value, (dict, list))
               else f"  {result.value!r}")
    for i, location in enumerate(result.chain):
        click.echo(f"  {'set' if i == 0 else 'overridden'} at {location}")


@main.command("autoscaler")
@click.argument("environments", nargs=-1)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--cluster", default="", help="Only the Ray cluster (or RayJob, RayService, RayCronJob) of this name.")
@click.option("--ray-versions", is_flag=True, help="Only list the Ray versions the environments name (one a line).")
@reports_errors
def autoscaler_command(environments: tuple[str, ...], output_format: str, cluster: str, ray_versions: bool) -> None:
    """Each cluster's node types as Ray's autoscaler sees them (its config generator), beside Kubernetes' view."""
    project = current_project()
    if ray_versions:
        click.echo("".join(f"{version}\n" for version in pipeline.ray_versions(project)), nl=False)
        return
    nodes = pipeline.autoscaler_nodes(project, environments, cluster)
    click.echo((autoscaler_report.format_json if output_format == "json" else autoscaler_report.format_text)(nodes),
               nl=False)


@main.command("crd-diff")
@click.argument("old")
@click.argument("new")
@click.option("--format", "output_format", type=click.Choice(["text", "markdown", "json"]), default="text",
              show_default=True, help="Output format.")
@reports_errors
def crd_diff_command(old: str, new: str, output_format: str) -> None:
    """Compare the CRDs of OLD and NEW (each a CRD file, a directory, a chart .tgz or kuberay-operator@VERSION);
    exit 1 when a change is breaking."""
    try:
        project_root: Path | None = current_project().root  # for its vendored charts, when there is a project
    except KrcError:
        project_root = None
    changes = pipeline.compare_crd_sources(old, new, project_root)
    click.echo(crddiff.format_changes(changes, output_format), nl=False)
    sys.exit(1 if crddiff.has_breaking(changes) else 0)


@main.command("policy")
@click.argument("environments", nargs=-1)
@reports_errors
def policy_command(environments: tuple[str, ...]) -> None:
    """Check environments (default: all) against the CUE policies in policies/; exit 1 on any violation."""
    def counted(n: int, one: str, many: str) -> str:
        return f"{n} {one if n == 1 else many}"

    checked = pipeline.check_policies(current_project(), environments)
    policies, names, problems = checked.policies, checked.environments, checked.findings
    for problem in problems:
        click.echo(problem.one_line())
    summary = (f"{counted(len(policies), 'policy', 'policies')} on "
               f"{counted(len(names), 'environment', 'environments')}: "
               f"{counted(len(problems), 'violation', 'violations')}")
    click.echo(summary if policies else "no policies in policies/*.cue", err=True)
    sys.exit(1 if problems else 0)


@main.command("lint")
@click.argument("targets", nargs=-1)
@click.option("--format", "output_format", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True, help="Output format.")
@click.option("--kuberay-version", help="Paths only: operator version whose CRDs and gates apply (default: newest).")
@click.option("--feature-gates", default="",
              help="Paths only: gate overrides, e.g. RayCronJob=true,RayClusterMTLS=false.")
@click.option("--argocd-crds", type=click.Path(exists=True), help="Argo CD's CRDs (file or folder): validate Argo CD "
              "objects too (environments: instead of their argocd.crds).")
@reports_errors
def lint_command(targets: tuple[str, ...], output_format: str, kuberay_version: str | None,
                 feature_gates: str, argocd_crds: str | None) -> None:
    """Lint environments (default: all) or YAML files and directories; exit 1 on any error-level finding."""
    root = click.get_current_context().find_root().params.get("project")
    problems = pipeline.lint_targets(list(targets), Path(root) if root else None, kuberay_version, feature_gates,
                            argocd_crds=argocd_crds)
    click.echo(report.render(problems, output_format), nl=False)
    if output_format == "text":
        counts = {s: sum(p.severity == s for p in problems) for s in ("error", "warning", "info")}
        click.echo(f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} infos", err=True)
    sys.exit(1 if has_errors(problems) else 0)


@main.command("rules")
@click.argument("rule_id", required=False)
@reports_errors
def rules_command(rule_id: str | None) -> None:
    """List every lint rule (id, severity, summary), or print one rule's documentation."""
    if rule_id is None:
        for rid, severity, summary in summaries():
            click.echo(f"{rid:45} {severity:8} {summary}")
        return
    click.echo(describe(rule_id))


@main.group("argocd")
def argocd_group() -> None:
    """Argo CD config-management plugin commands (see deploy/argocd/README.md)."""


def _argocd_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Request options; each overrides ARGOCD_APP_PARAMETERS, PARAM_* and ARGOCD_ENV_KRC_* (the plugin inputs)."""
    for option in reversed([
        click.option("--environment", help="Environment to render (plugin parameter 'environment')."),
        click.option("--crds", type=click.Choice(["include", "exclude", "only"]),
                     help="The chart's CRDs: include (default), exclude, only."),
        click.option("--applications", type=click.Choice(["include", "exclude", "only"]),
                     help="The environment's child Argo CD Applications: include, exclude (default), only."),
        click.option("--cluster", help="Retarget the child Applications at this Argo CD cluster name."),
    ]):
        command = option(command)
    return command


@argocd_group.command("generate")
@_argocd_options
@click.option("--argocd-crds", type=click.Path(exists=True), help="Argo CD CRDs to validate Applications against "
              "(default: the environment's argocd.crds).")
@reports_errors
def argocd_generate_command(argocd_crds: str | None, **options: str | None) -> None:
    """Print one environment's objects as one YAML stream; on any error print nothing and exit 2."""
    generated = pipeline.argocd_generate(current_project(), os.environ, options, argocd_crds)
    for problem in generated.warnings:
        click.echo(problem.one_line(), err=True)
    sys.stdout.write(generated.stream)  # everything at once, only after everything succeeded
    sys.stdout.flush()
    click.echo(argocd.describe(generated), err=True)


@argocd_group.command("init")
@_argocd_options
@reports_errors
def argocd_init_command(**options: str | None) -> None:
    """Vendor the charts 'generate' needs (the chosen environment's, else all); cached charts are kept."""
    for result in pipeline.argocd_init(current_project(), os.environ, options):
        state = "downloaded" if result.downloaded else "cached"
        click.echo(f"{result.pin.name} {result.pin.version} sha256:{result.digest} ({state})", err=True)


@argocd_group.command("validate")
@click.argument("environments", nargs=-1)
@click.option("--crds", "crds_path", type=click.Path(exists=True), help="Argo CD CRDs (file or directory; default: "
              "each environment's argocd.crds).")
@reports_errors
def argocd_validate_command(environments: tuple[str, ...], crds_path: str | None) -> None:
    """Check environments' Argo CD Applications against Argo CD's CRDs; exit 1 on any error."""
    problems = pipeline.validate_argocd(current_project(), environments, crds_path)
    for problem in problems:
        click.echo(problem.one_line())
    sys.exit(1 if any(p.severity == "error" for p in problems) else 0)
