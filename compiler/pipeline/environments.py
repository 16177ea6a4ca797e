"""One environment at a time: load, render, validate and lint it; and the plain loop over a few of them
(`compile_environments`) that commands on one or two environments use.
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass

from ..argocd.validation import environment_problems
from ..charts import vendored
from ..charts.pins import ChartPin
from ..diagnostics.problems import KrcError, Location, Problem, sorted_problems
from ..environment.model import Environment, load_environment, merged_settings
from ..k8s.destinations import DESTINATION_SETTINGS, Destination, destination_of
from ..lint import (
    LintContext,
    environment_context,
    lint_validated,
    validate_objects,
    view_findings,
)
from ..lint.schema_step import SchemaValidation, start_documents
from ..project.paths import Project
from ..render.templates import Render, render_environment
from ..results.destination_cache import DestinationIndex
from ..rules.support.autoscaler_view import AutoscalerView


def chart_pin(env: Environment) -> ChartPin:
    chart = env.data["operator"]["chart"]
    name, version = str(chart["name"]), str(chart["version"])
    problem = vendored.chart_pin_problem(name, version)
    if problem:  # before the name or version touches a path
        field = "name" if "name" in problem.split(" is ")[0] else "version"
        raise KrcError(problem, env.location_of(("operator", "chart", field)))
    return ChartPin(name, version, str(chart["repository"]))


def compile_environment(project: Project, name: str) -> Render:
    env = load_environment(project, name)
    pin = chart_pin(env)
    chart = vendored.load_vendored_chart(project.vendor_dir, pin.name, pin.version)
    return render_environment(project, env, chart)


@dataclass(frozen=True)
class Validated:
    """A render with its objects as the API server stores them (CRD defaults applied) and the schema findings."""

    render: Render
    context: LintContext
    schema_problems: tuple[Problem, ...]


def validate_render(render: Render, peers: tuple[Destination, ...] = (),
                    started: StartedValidation | None = None) -> Validated:
    """`peers`: where the project's other environments deploy (the destination-collision rule reads them);
    `started`: this render's validation, sent to the engine before (start_validating with the same peers)."""
    ahead = started.schemas if started is not None and started.render is render else None
    context, problems = validate_objects(environment_context(render, peers), ahead)
    return Validated(render, context, tuple(problems))


@dataclass(frozen=True)
class StartedValidation:
    """A render's custom resources under the engine's validation (validate_render takes the verdicts)."""

    render: Render
    schemas: SchemaValidation


def start_validating(render: Render) -> StartedValidation:
    """The render's custom resources sent to the engine now: it judges them while this process goes on (renders
    the next environment of its job). Its lint context is made when the verdicts are taken: what it holds (each
    object's places in the environment) is not kept for every environment of a job meanwhile."""
    return StartedValidation(render, start_documents(render.chart.crds, [o.document for o in render.objects]))


def ray_version(env: Environment) -> str:
    ray = env.data.get("ray")
    return str(ray.get("version") or "") if isinstance(ray, dict) else ""


def _generator_missing(render: Render, view: AutoscalerView) -> Problem:
    where = render.environment.location_of(("ray", "version")) or Location(f"environment {render.environment.name}")
    return Problem(f"the autoscaler's view was not checked: {view.unavailable}", where, "error",
                   "autoscaler/generator", object=f"environment/{render.environment.name}",
                   segments=("ray", "version"))


def validated_findings(validated: Validated, project: Project | None = None,
                       argocd_crds: str | None = None) -> list[Problem]:
    """Every finding about what an environment renders without Ray's view: schema and rules against the pinned
    CRDs, and (given the project) its Argo CD objects against the Argo CD CRDs it names or `argocd_crds`."""
    findings = lint_validated(validated.context, list(validated.schema_problems))
    render = validated.render
    if project is not None:
        findings += environment_problems(project, render.environment, render.objects, argocd_crds)
    return sorted_problems(findings)


def findings_with_view(validated: Validated, findings: Sequence[Problem], view: AutoscalerView) -> list[Problem]:
    """validated_findings with Ray's view, from `findings`, the ones validated_findings gave without it (the
    compile's): only the rules that read the view find anything more with it (About.reads_autoscaler_view). A view
    without a generator is an error: CI must not pass as if it had been checked."""
    found = [*findings, *view_findings(dataclasses.replace(validated.context, autoscaler=view))]
    if view.unavailable:
        found.append(_generator_missing(validated.render, view))
    return sorted_problems(found)


def project_destinations(project: Project, index: DestinationIndex | None = None,
                         names: Sequence[str] | None = None) -> tuple[Destination, ...]:
    """Where every environment of the project (`names`, when already listed) deploys (files that fail to load are
    reported on their own); from `index` (the cache's DestinationIndex) for environments whose layers kept their
    bytes."""
    found = []
    names = project.environment_names() if names is None else names
    accepted = _accepted(project)
    for name in names:
        known, destination = index.destination(name) if index is not None else (False, None)
        if not known:
            try:
                settings, files = merged_settings(project, name, DESTINATION_SETTINGS)
            except KrcError:
                continue  # reported when the environment itself is compiled
            destination = destination_of(name, settings, files[-1], files[:-1])
            if index is not None:
                index.store(name, destination, [project.root / f for f in files])
        if destination is not None:
            found.append(dataclasses.replace(destination, accepted=name in accepted))
    if index is not None:
        index.save(names)
    return tuple(found)


def _accepted(project: Project) -> frozenset[str]:
    """The folders golden/ holds (a link to one counts, as Path.is_dir has it): read afresh each time, never
    cached, since accepting an environment into golden/ changes them; one listing, not a status per environment."""
    try:
        with os.scandir(project.golden_dir) as entries:
            return frozenset(entry.name for entry in entries if entry.is_dir())
    except OSError:
        return frozenset()


def environment_findings(render: Render, project: Project | None = None, argocd_crds: str | None = None,
                         peers: tuple[Destination, ...] | None = None) -> list[Problem]:
    """The findings `krc render` stops on: everything but the autoscaler's view (render never needs Ray); the
    environment's destination is compared with `peers` (read from the project when not given)."""
    if peers is None:
        peers = project_destinations(project) if project is not None else ()
    return validated_findings(validate_render(render, peers), project, argocd_crds)


def check_environment(render: Render, project: Project | None = None, argocd_crds: str | None = None,
                      peers: tuple[Destination, ...] | None = None) -> Render:
    """The render with its findings; error-level findings stop the pipeline."""
    findings = environment_findings(render, project, argocd_crds, peers)
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        raise KrcError(errors)
    return dataclasses.replace(render, findings=tuple(findings))


def compile_environments(project: Project, names: Sequence[str], lint: bool = True) -> list[Render]:
    """Every named environment, checked, or every problem of all of them (one bad file does not hide another)."""
    renders: list[Render] = []
    problems: list[Problem] = []
    peers = project_destinations(project) if lint else ()
    for name in names:
        try:
            render = compile_environment(project, name)
            renders.append(check_environment(render, project, peers=peers) if lint else render)
        except KrcError as err:
            problems.extend(err.problems)
    if problems:
        # a shared template or layer fails the same way for every environment: say it once
        raise KrcError(sorted_problems(set(problems)))
    return renders
