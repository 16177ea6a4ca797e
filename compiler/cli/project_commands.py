"""Commands about the project and its environments: init, envs, show, explain, autoscaler, rules.
"""
from __future__ import annotations

import json
from pathlib import Path

import click

from .. import pipeline
from ..autoscaler import report as autoscaler_report
from ..diagnostics.problems import safe_text
from ..documents import yamlio
from ..pipeline.pods import environment_pods, pods_notes, pods_yaml_documents
from .support import (
    complete_environments,
    complete_layers,
    complete_rules,
    current_project,
    project_or_none,
    working,
)


@click.command("init", short_help="Create a new environment file that extends a layer.")
@click.argument("environment")
@click.option("--extends", "extends", required=True, shell_complete=complete_layers,
              help="The environment or layer it builds on (e.g. base, dev).")
@click.option("--destination", help="Argo CD destination: an API server URL or a cluster name registered in Argo CD.")
@click.option("--namespace", help="Namespace of its workloads (also created as a Namespace object); default "
              "ray-ENVIRONMENT, with the operator in kuberay-ENVIRONMENT watching it.")
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


@click.command("envs", short_help="List the environments: layers, namespace, destination, chart.")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
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
        click.echo(safe_text("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()))


@click.command("show", short_help="Print everything an environment deploys (YAML or JSON).")
@click.argument("environment", shell_complete=complete_environments)
@click.option("--kind", "kinds", multiple=True, help="Only objects of this kind (repeatable), e.g. RayCluster.")
@click.option("--crds", is_flag=True, help="Also the pinned chart's CRDs (as shipped, which Helm installs once).")
@click.option("--pods", is_flag=True, help="The Pods and Services KubeRay's controllers create instead "
              "(its own builders, at the pinned version).")
@click.option("-o", "--output", "output_format", type=click.Choice(["yaml", "json"]), default="yaml",
              show_default=True, help="Output format.")
def show_command(environment: str, kinds: tuple[str, ...], crds: bool, pods: bool, output_format: str) -> None:
    """Print everything ENVIRONMENT deploys to stdout: its objects and the operator chart's (validated and
    linted as by render; nothing written); the chart's CRDs too with --crds.

    \b
    Examples:
      krc show dev --kind RayCluster
      krc show dev --kind Deployment          # the operator, from the chart
      krc show prod-eks-gpu --crds --kind CustomResourceDefinition
      krc show prod-eks-gpu -o json | jq '.[].metadata.name'
      krc show prod-eks-gpu --pods            # one Pod per group, with its count at min and max
    """
    if pods:
        show_pods(environment, output_format)
        return
    with working(f"rendering {environment}"):
        objects = pipeline.show_environment(current_project(), environment, kinds, crds)
    if output_format == "json":
        click.echo(json.dumps(objects, indent=2, sort_keys=True, ensure_ascii=False))
    else:
        click.echo(yamlio.dump_all(objects), nl=False)


def show_pods(environment: str, output_format: str) -> None:
    with working(f"building {environment}'s Pods"):
        found = environment_pods(current_project(), environment)
    for note in pods_notes(found):
        click.echo(safe_text(f"krc: {note}"), err=True)
    if output_format == "json":
        click.echo(json.dumps([f.as_json() for f in found], indent=2, sort_keys=True, ensure_ascii=False))
        return
    shown = pods_yaml_documents(found)
    click.echo("".join("---\n" + "".join(f"# {safe_text(line)}\n" for line in comment) + yamlio.dump(doc)
                       for comment, doc in shown), nl=False)


@click.command("explain", short_help="Show a value, its default or a rendered field, and where it comes from.")
@click.argument("environment", shell_complete=complete_environments)
@click.argument("path")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format (json: one object with value, origin, setBy, template).")
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
    # the value is the user's: its control and bidirectional characters escaped (problems.safe_text), line by line
    if result.origin == "unset":
        click.echo(safe_text(f"{result.environment}: {result.path} is not set"))
    else:
        click.echo(safe_text(f"{result.environment}: {result.path} =" + (f"\n{_indent(shown)}" if "\n" in shown
                                                                          else f" {shown}"), lines=True))
    if result.description:
        click.echo(safe_text(f"  # {result.description}"))
    if result.template:
        click.echo(f"  rendered by {result.template}")
    for note in result.notes:
        click.echo(safe_text(f"  {note}"))
    for i, location in enumerate(result.chain):
        if result.origin == "rendered":
            click.echo(f"  from the environment at {location}")
        else:
            click.echo(f"  {'set' if i == 0 else 'overridden'} at {location}")


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


@click.command("autoscaler", short_help="Each cluster's node types as Ray's autoscaler sees them.")
@click.argument("environments", nargs=-1, shell_complete=complete_environments)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--cluster", default="", help="Only the Ray cluster (or RayJob, RayService, RayCronJob) of this name.")
@click.option("--ray-versions", is_flag=True, help="Only list the Ray versions the environments name (one a line).")
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


@click.command("rules", short_help="List the lint rules and policies, or print one's document.")
@click.argument("rule_id", required=False, shell_complete=complete_rules)
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
            click.echo(safe_text(f"{rid:45} {severity:8} {text}"))
        return
    click.echo(safe_text(pipeline.describe_rule(project, rule_id), lines=True), nl=False)  # a policy file's text
