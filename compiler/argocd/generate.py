"""`krc argocd generate`: the plugin's output for one checked render, as one string.

The command prints everything or nothing: Argo CD prunes whatever a partial or empty output lacks. The pipeline
compiles and checks the environment (no network: charts come from vendor/; no clock; no writes).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..charts.package import Crd
from ..diagnostics.problems import KrcError, Problem
from ..k8s.objects import RenderedObject
from ..project.paths import Project
from .parameters import Request
from .selection import select_documents
from .stream import dump_stream


@dataclass(frozen=True)
class CheckedEnvironment:
    """What the plugin prints from: one environment's checked objects, its pinned chart's version and CRDs (empty
    when the request leaves them out: reading them is most of a warm run's time) and what the pinned Helm rendered
    of that chart."""

    name: str
    chart_version: str
    chart_crds: tuple[Crd, ...]
    objects: tuple[RenderedObject, ...]
    chart_objects: tuple[RenderedObject, ...]
    findings: tuple[Problem, ...]


@dataclass(frozen=True)
class Generated:
    environment: str
    stream: str  # the YAML stream for stdout
    count: int  # documents in it
    warnings: tuple[Problem, ...]  # non-blocking findings, for stderr


def chosen_environment(project: Project, request: Request) -> str:
    if not request.environment:
        known = project.environment_names()
        raise KrcError("no environment chosen: set the plugin parameter 'environment' (or the plugin env entry "
                       f"KRC_ENVIRONMENT) to one of: {', '.join(known) or '(none in environments/)'}")
    return project.select([request.environment])[0]


def generated(environment: CheckedEnvironment, request: Request) -> Generated:
    """The documents `request` selects from a checked environment, as one stream; nothing selected is an error."""
    name = environment.name
    if request.chart_version and request.chart_version != environment.chart_version:
        raise KrcError(f"the Application asks for chart {request.chart_version}, environment {name} pins "
                       f"{environment.chart_version}; re-render the Applications (krc render) and sync the root app")
    documents = select_documents(environment.objects, environment.chart_crds, request, environment.chart_objects)
    if not documents:
        raise KrcError(f"environment {name} has nothing to deploy for crds={request.crds}, "
                       f"applications={request.applications}, operator={request.operator}; refusing to print an empty "
                       "stream (Argo CD would "
                       "prune everything): check the plugin parameters")
    return Generated(name, dump_stream(documents), len(documents), environment.findings)


def describe(generated: Generated) -> str:
    """One line for stderr: what was printed (Argo CD logs the sidecar's stderr)."""
    return f"krc: {generated.environment}: {generated.count} documents"

