"""The command line: parse options, call one core function, report, choose the exit code.

Exit codes everywhere: 0 fine, 1 findings or differences, 2 bad input or a failing environment (disk, network,
permissions; nothing written), 3 an internal error. No traceback is printed unless KRC_DEBUG=1.
Commands are listed by `krc --help` in the order of a working day (cli_support.WORKFLOW_ORDER).
"""
from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from . import argocd, crddiff, output, pipeline, review, yamlio
from .autoscaler import report as autoscaler_report
from .cli_support import (
    WorkflowGroup,
    complete_environments,
    complete_layers,
    complete_rules,
    current_project,
    print_versions,
    project_or_none,
    show_problems,
    working,
)
from .lint import report
from .problems import KrcError, has_errors
from .project import printable
from .report_format import COLOR_CHOICES, plural, summary

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 120}


def reports_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Bad input becomes one block per problem on stderr and exit status 2."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except KrcError as err:
            show_problems(err.problems)
            sys.exit(2)

    return wrapper


def run_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--no-cache and --jobs, for commands that work through many environments (see pipeline.RunOptions)."""
    command = click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
                           help="Processes compiling in parallel (default: one per core).")(command)
    return click.option("--no-cache", is_flag=True, help="Compile everything again; neither read nor write the "
                        "compile cache.")(command)


def run_settings(no_cache: bool, jobs: int | None) -> pipeline.RunOptions:
    return pipeline.RunOptions(cache=not no_cache, workers=jobs)


DEBUG_VARIABLE = "KRC_DEBUG"


def _debugging() -> bool:
    return os.environ.get(DEBUG_VARIABLE, "").strip() not in ("", "0", "false", "no")


class ErrorEdge(WorkflowGroup):
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
            show_problems(err.problems)
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


@click.group(cls=ErrorEdge, context_settings=CONTEXT)
@click.option("--project", type=click.Path(file_okay=False), help="Project root (default: found from the cwd).")
@click.option("--color", type=click.Choice(COLOR_CHOICES), default="auto", show_default=True,
              help="Colour: auto (on a terminal, unless NO_COLOR is set; FORCE_COLOR forces it), always, never.")
@click.option("--version", is_flag=True, expose_value=False, is_eager=False, callback=print_versions,
              help="Show the versions of krc, Jinja2, Jsonnet, Helm and the CUE engine, and exit.")
def main(project: str | None, color: str) -> None:
    """krc: compile KubeRay environments into manifests, Helm values and CRDs; validate, lint and diff them.

    \b
    The daily loop:
      edit environments/<env>.yaml
      krc diff            # what changes, object by object
      krc golden          # accept the render into golden/
      git commit          # golden/ is reviewed with the change

    \b
    Shell completion (environment names, rule ids, formats):
      eval "$(_KRC_COMPLETE=bash_source krc)"    # zsh: zsh_source, fish: fish_source
    """


@main.command("init", short_help="Create a new environment file that extends a layer.")
@click.argument("environment")
@click.option("--extends", "extends", required=True, shell_complete=complete_layers,
              help="The environment or layer it builds on (e.g. base, dev).")
@click.option("--destination", help="Argo CD destination: an API server URL or a cluster name registered in Argo CD.")
@click.option("--namespace", help="Namespace of its workloads (also created as a Namespace object).")
@reports_errors
def init_command(environment: str, extends: str, destination: str | None, namespace: str | None) -> None:
    """Create environments/ENVIRONMENT.yaml extending a layer, with the schema comment editors use; it is
    checked by loading it, and nothing is written when it would not load.

    \b
    Example:
      krc init staging --extends base --namespace ray-staging --destination https://staging.example.com
    """
    project = current_project()
    path = pipeline.init_environment(project, environment, extends, destination, namespace)
    click.echo(f"created {project.relative(path)}; next: add a cluster, then 'krc diff {environment}'")


@main.command("envs", short_help="List the environments: layers, namespace, destination, chart.")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
@reports_errors
def envs_command(output_format: str) -> None:
    """List every environment with its layers (base first), namespace, Argo CD destination and pinned chart.

    \b
    Example:
      krc envs
    """
    summaries = pipeline.list_environments(current_project())
    if output_format == "json":
        click.echo(json.dumps([s.as_json() for s in summaries], indent=2, sort_keys=True))
        return
    rows = [("ENVIRONMENT", "LAYERS", "NAMESPACE", "DESTINATION", "CHART")]
    rows += [(s.name, " > ".join(Path(f).stem for f in s.layers), s.namespace, s.destination or "-", s.chart)
             for s in summaries]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


@main.command("show", short_help="Print the objects an environment renders (YAML or JSON).")
@click.argument("environment", shell_complete=complete_environments)
@click.option("--kind", "kinds", multiple=True, help="Only objects of this kind (repeatable), e.g. RayCluster.")
@click.option("-o", "--output", "output_format", type=click.Choice(["yaml", "json"]), default="yaml",
              show_default=True, help="Output format.")
@reports_errors
def show_command(environment: str, kinds: tuple[str, ...], output_format: str) -> None:
    """Print the objects ENVIRONMENT renders to stdout (validated and linted as by render; nothing written).

    \b
    Examples:
      krc show dev --kind RayCluster
      krc show prod-eks-gpu -o json | jq '.[].metadata.name'
    """
    with working(f"rendering {environment}"):
        objects = pipeline.show_environment(current_project(), environment, kinds)
    if output_format == "json":
        click.echo(json.dumps(objects, indent=2, sort_keys=True, ensure_ascii=False))
    else:
        click.echo(yamlio.dump_all(objects), nl=False)


@main.command("vendor", short_help="Download the pinned charts into vendor/.")
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


@main.command("render", short_help="Render environments into rendered/<env>/.")
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
        if result.findings:
            click.echo(f"{result.name}: {summary(result.findings)}; see 'krc lint {result.name}'", err=True)


@main.command("golden", short_help="Accept the current render into golden/.")
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
        click.echo(f"golden/{result.name} updated")


@main.command("check", short_help="Exit 1 when golden/ differs from the render (CI).")
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


@main.command("diff", short_help="Review the render against golden/, object by object.")
@click.argument("environments", nargs=-1, shell_complete=complete_environments)
@click.option("--format", "output_format", type=click.Choice(["text", "markdown", "json"]), default="text",
              show_default=True, help="Output format (markdown: a pull-request comment).")
@click.option("--base", metavar="REF", help="Compare with golden/ as committed at git REF (e.g. origin/main).")
@click.option("--output", "outputs", metavar="FORMAT=FILE", multiple=True,
              help="Also write the report in FORMAT to FILE (repeatable), from the same compile: "
                   "--output json=krc-review.json --output text=krc-review.txt.")
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
    targets = []
    for option in outputs:
        name, _, file = option.partition("=")
        if name not in review.FORMATS or not file:
            raise KrcError(f"--output {option!r}: write FORMAT=FILE with FORMAT one of {', '.join(review.FORMATS)}")
        target = Path(file).resolve()
        if not target.is_relative_to(project.root.resolve()):
            raise KrcError(f"--output {option!r}: {target} is outside the project {project.root}; write reports "
                           "inside it")
        targets.append((name, target))
    names = project.select(environments)
    with working(f"rendering {plural(len(names), 'environment')}"):
        result = pipeline.review_project(project, names, base, run_settings(no_cache, jobs))
    for name, path in targets:  # every format from the one review
        output.replace_file(path, review.format_review(result, name).encode("utf-8"))
    click.echo(review.format_review(result, output_format), nl=False)
    sys.exit(result.exit_code)


@main.command("approve", short_help="Approve ENV's breaking CRD upgrade: write approvals/ENV.crd-upgrade.yaml.")
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


@main.command("explain", short_help="Show a value, its default or a rendered field, and where it comes from.")
@click.argument("environment", shell_complete=complete_environments)
@click.argument("path")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format (json: one object with value, origin, setBy, template).")
@reports_errors
def explain_command(environment: str, path: str, output_format: str) -> None:
    """Show a value of ENVIRONMENT and where it comes from: the layers that set it, krc's default, or, for a
    rendered field, the template that wrote it.

    \b
    Examples:
      krc explain dev 'clusters[ray-cpu-demo].workerGroups[cpu].maxReplicas'
      krc explain dev 'clusters[ray-cpu-demo].workerGroups[cpu].minReplicas'   # a default
      krc explain dev RayCluster/ray-cpu-demo:spec.workerGroupSpecs[0].maxReplicas --format json
    """
    result = pipeline.explain(current_project(), environment, path)
    if output_format == "json":
        click.echo(json.dumps(result.as_json(), indent=2, sort_keys=True, default=str))
        return
    shown = (yamlio.dump(result.value).rstrip("\n") if isinstance(result.value, (dict, list))
             else json.dumps(result.value, ensure_ascii=False, default=str))
    click.echo(f"{result.environment}: {result.path} =" + (f"\n{_indent(shown)}" if "\n" in shown else f" {shown}"))
    if result.description:
        click.echo(f"  # {result.description}")
    if result.template:
        click.echo(f"  rendered by {result.template}")
    for note in result.notes:
        click.echo(f"  {note}")
    for i, location in enumerate(result.chain):
        if result.origin == "rendered":
            click.echo(f"  from the environment at {location}")
        else:
            click.echo(f"  {'set' if i == 0 else 'overridden'} at {location}")


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


@main.command("autoscaler", short_help="Each cluster's node types as Ray's autoscaler sees them.")
@click.argument("environments", nargs=-1, shell_complete=complete_environments)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--cluster", default="", help="Only the Ray cluster (or RayJob, RayService, RayCronJob) of this name.")
@click.option("--ray-versions", is_flag=True, help="Only list the Ray versions the environments name (one a line).")
@reports_errors
def autoscaler_command(environments: tuple[str, ...], output_format: str, cluster: str, ray_versions: bool) -> None:
    """Each cluster's node types as Ray's autoscaler sees them (its config generator), beside Kubernetes' view.

    \b
    Example:
      krc autoscaler dev --cluster ray-cpu-demo
    """
    project = current_project()
    if ray_versions:
        click.echo("".join(f"{version}\n" for version in pipeline.ray_versions(project)), nl=False)
        return
    nodes = pipeline.autoscaler_nodes(project, environments, cluster)
    click.echo((autoscaler_report.format_json if output_format == "json" else autoscaler_report.format_text)(nodes),
               nl=False)


@main.command("crd-diff", short_help="Classify the changes between two CRD sets (breaking or not).")
@click.argument("old")
@click.argument("new")
@click.option("--format", "output_format", type=click.Choice(["text", "markdown", "json"]), default="text",
              show_default=True, help="Output format.")
@reports_errors
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


@main.command("policy", short_help="Check environments against the CUE policies in policies/.")
@click.argument("environments", nargs=-1, shell_complete=complete_environments)
@run_options
@reports_errors
def policy_command(environments: tuple[str, ...], no_cache: bool, jobs: int | None) -> None:
    """Check environments (default: all) against the CUE policies in policies/; exit 1 on any violation.

    \b
    Example:
      krc policy prod-eks-gpu
    """
    with working("checking policies"):
        checked = pipeline.check_policies(current_project(), environments, run=run_settings(no_cache, jobs))
    policies, names, problems = checked.policies, checked.environments, checked.findings
    for problem in problems:
        click.echo(problem.one_line())
    line = (f"{plural(len(policies), 'policy')} on {plural(len(names), 'environment')}: "
            f"{plural(len(problems), 'violation')}")
    click.echo(line if policies else "no policies in policies/*.cue", err=True)
    sys.exit(1 if problems else 0)


@main.command("lint", short_help="Validate against the CRDs and run KubeRay's rules.")
@click.argument("targets", nargs=-1, shell_complete=complete_environments)
@click.option("--format", "output_format", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True, help="Output format.")
@click.option("--kuberay-version", help="Paths only: operator version whose CRDs and gates apply (default: newest).")
@click.option("--feature-gates", default="",
              help="Paths only: gate overrides, e.g. RayCronJob=true,RayClusterMTLS=false.")
@click.option("--argocd-crds", type=click.Path(exists=True), help="Argo CD's CRDs (file or folder): validate Argo CD "
              "objects too (environments: instead of their argocd.crds).")
@run_options
@reports_errors
def lint_command(targets: tuple[str, ...], output_format: str, kuberay_version: str | None,
                 feature_gates: str, argocd_crds: str | None, no_cache: bool, jobs: int | None) -> None:
    """Lint environments (default: all) or YAML files and directories; exit 1 on any error-level finding.

    \b
    Examples:
      krc lint dev
      krc lint rendered/dev/manifests --format sarif > krc.sarif
    """
    root = click.get_current_context().find_root().params.get("project")
    with working("linting"):
        problems = pipeline.lint_targets(list(targets), Path(root) if root else None, kuberay_version, feature_gates,
                                         argocd_crds=argocd_crds, run=run_settings(no_cache, jobs))
    if output_format == "text" and sys.stdout.isatty():
        show_problems(problems, err=False)  # a person reading: the source line and the fix under each finding
    else:
        click.echo(report.render(problems, output_format), nl=False)  # a pipe or a tool: one line per finding
    if output_format == "text":
        click.echo(summary(problems), err=True)
    sys.exit(1 if has_errors(problems) else 0)


@main.command("rules", short_help="List the lint rules and policies, or print one's document.")
@click.argument("rule_id", required=False, shell_complete=complete_rules)
@reports_errors
def rules_command(rule_id: str | None) -> None:
    """List every lint rule and policy (id, severity, summary), or print one's document (policy/NAME: the policy).

    \b
    Examples:
      krc rules
      krc rules raycluster/worker-replicas
      krc rules policy/dev-no-gpu
    """
    project = project_or_none()
    if rule_id is None:
        for rid, severity, text in pipeline.rule_list(project):
            click.echo(f"{rid:45} {severity:8} {text}")
        return
    click.echo(pipeline.describe_rule(project, rule_id), nl=False)


@main.group("argocd", context_settings=CONTEXT,
            short_help="The Argo CD config-management plugin (generate, init, validate).")
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
        click.option("--operator", type=click.Choice(["include", "exclude", "only"]),
                     help="The operator chart's objects as the pinned Helm renders them: include (default), exclude, "
                     "only."),
        click.option("--cluster", help="Retarget the child Applications at this Argo CD cluster name."),
    ]):
        command = option(command)
    return command


@argocd_group.command("generate")
@_argocd_options
@click.option("--argocd-crds", type=click.Path(exists=True), help="Argo CD CRDs to validate Applications against "
              "(default: the environment's argocd.crds).")
@click.option("--no-cache", is_flag=True, help="Compile again; neither read nor write the compile cache.")
@reports_errors
def argocd_generate_command(argocd_crds: str | None, no_cache: bool, **options: str | None) -> None:
    """Print one environment's objects as one YAML stream; on any error print nothing and exit 2."""
    generated = pipeline.argocd_generate(current_project(), os.environ, options, argocd_crds,
                                         pipeline.RunOptions(cache=not no_cache))
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
