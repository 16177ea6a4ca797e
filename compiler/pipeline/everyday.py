"""The everyday commands over the project: explain, envs, show, init, rules, --version.
"""
from __future__ import annotations

import dataclasses
import difflib
from pathlib import Path

from ..diagnostics.problems import KrcError, Problem
from ..environment import scaffold
from ..environment.model import Environment, load_environment
from ..explain import inventory
from ..explain import value_sources as explaining
from ..k8s.destinations import destination_of
from ..k8s.secrets import redact_at
from ..project.paths import Project, shown_name
from ..rules import describe, summaries
from .environments import compile_environment, compile_environments, project_destinations


def explain(project: Project, name: str, path: str) -> explaining.Explanation:
    """`krc explain`: an environment value (with its layers or krc's default), or a rendered field
    (`Kind/name:field`, with its template and the environment line behind it)."""
    project.select([name])
    if explaining.is_rendered_path(path):
        result = explaining.explain_rendered(compile_environment(project, name), path)
        kind, _, field = result.path.partition(":")
        # credentials are shown as *** (files keep them)
        return dataclasses.replace(result, value=redact_at(field, result.value, kind.split("/", 1)[0]))
    result = explaining.explain_environment(load_environment(project, name), path)
    return dataclasses.replace(result, value=redact_at(result.path, result.value))


def list_environments(project: Project) -> list[inventory.EnvironmentSummary]:
    """`krc envs`: every environment with its layers, destination and chart (loaded, not rendered)."""
    return [inventory.summarize(load_environment(project, name)) for name in project.environment_names()]


def show_environment(project: Project, name: str, kinds: tuple[str, ...], crds: bool = False
                     ) -> list[dict[str, object]]:
    """`krc show`: everything one environment deploys (validated and linted as by render): its objects, the
    operator chart's objects and, with `crds`, the chart's CRDs; some kinds only."""
    [render] = compile_environments(project, project.select([name]))
    objects = inventory.select_objects(render, kinds, crds)
    if kinds and not objects:
        asked_crds = "customresourcedefinition" in {inventory.wanted_kind(k) for k in kinds}
        crd_hint = "; the chart's CRDs are shown with --crds" if asked_crds and not crds else ""
        raise KrcError(Problem(f"environment {name} renders no {', '.join(kinds)}",
                               help=f"kinds it renders: {', '.join(inventory.known_kinds(render, crds))}{crd_hint}"))
    return objects


def init_environment(project: Project, name: str, extends: str, destination: str | None,
                     namespace: str | None) -> Path:
    """`krc init`: a new environment file extending `extends`, checked by loading it; nothing is left behind
    when it does not load."""
    if not scaffold.ENVIRONMENT_NAME.fullmatch(name):
        raise KrcError(Problem(f"'{shown_name(name)}' is not a usable environment name",
                               help="use lowercase letters, digits and '-', e.g. staging or prod-eu"))
    path = project.environment_file(name)  # checks the name again before it becomes a path
    if path.exists():
        raise KrcError(Problem(f"{project.relative(path)} already exists", help="choose another name, or edit it"))
    if extends not in project.layer_names():
        close = difflib.get_close_matches(extends, project.layer_names(), n=1, cutoff=0.5)
        raise KrcError(Problem(f"there is no environment or layer '{extends}' to extend",
                               help=f"did you mean --extends {close[0]}?" if close else
                               f"extend one of: {', '.join(project.layer_names())}"))
    text = scaffold.new_environment(name, extends, destination, namespace)
    with path.open("x", encoding="utf-8") as handle:  # never replaces a file that appeared meanwhile
        handle.write(text)
    try:
        new_environment_collides_with_nothing(project, load_environment(project, name))
    except KrcError:
        path.unlink()
        raise
    return path


def new_environment_collides_with_nothing(project: Project, env: Environment) -> None:
    """What environment/destination-collision would report on the new environment, said by `krc init` instead
    (nothing written): an inherited destination, or a cluster and namespace another environment deploys to."""
    own = destination_of(env.name, env.data, env.files[-1])
    if own is None:
        return
    peers = [p for p in project_destinations(project) if p.environment != env.name]
    set_at = env.location_of(("argocd", "destination"))
    for peer in peers:
        if set_at is not None and set_at.file == peer.file:
            raise KrcError(Problem(
                f"environment {env.name} would inherit argocd.destination from environment {peer.environment} "
                f"({set_at}) and deploy into its cluster",
                help="pass --destination URL|NAME: the cluster it deploys to, as registered in Argo CD"))
    for peer in peers:
        shared = own.shared_with(peer)
        if shared:
            raise KrcError(Problem(
                f"environment {env.name} would deploy to the same cluster ({own.cluster}) and namespaces "
                f"({', '.join(shared)}) as environment {peer.environment} ({peer.file})",
                help="pass --destination URL|NAME (a cluster of its own), or --namespace NS (a namespace no other "
                     "environment uses there)"))


def versions(project: Project | None) -> list[tuple[str, str]]:
    """`krc --version`: krc and the engines it would use here."""
    return inventory.tool_versions()


def describe_rule(project: Project | None, rule_id: str) -> str:
    """`krc rules ID`: a lint rule's document, or `policy/NAME`: the policy file policies/NAME.cue."""
    if not rule_id.startswith("policy/"):
        return describe(rule_id)
    name = rule_id.removeprefix("policy/")
    known = sorted(p.stem for p in project.policies_dir.glob("*.cue")) if project else []
    if name not in known:  # also keeps the name inside policies/: only listed files are read
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
        raise KrcError(Problem(f"no policy '{name}' in policies/",
                               help=f"did you mean 'policy/{close[0]}'?" if close else
                               f"policies: {', '.join('policy/' + k for k in known) or 'none'}"))
    assert project is not None
    path = project.policies_dir / f"{name}.cue"
    return f"policy/{name}  (error; CUE policy {project.relative(path)}, checked by krc policy and krc lint)\n\n" \
           + path.read_text(encoding="utf-8")


def rule_list(project: Project | None) -> list[tuple[str, str, str]]:
    """`krc rules`: every lint rule, then the project's policies, as (id, severity, summary)."""
    policies = sorted(project.policies_dir.glob("*.cue")) if project else []
    return summaries() + [(f"policy/{p.stem}", "error", _policy_summary(p)) for p in policies]


def _policy_summary(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("//"):
            return line.removeprefix("//").strip()
    return "organisation policy"
