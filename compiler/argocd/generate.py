"""`krc argocd generate` and `init`: the config-management plugin's commands, as pure functions.

generate compiles one environment from the files in the working tree and returns the whole YAML stream as one
string, so the command prints everything or nothing: Argo CD prunes whatever a partial or empty output lacks.
No network (charts come from vendor/), no clock, no writes inside the repository.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import pipeline
from ..charts import vendor
from ..problems import KrcError, Problem
from ..project import Project
from .parameters import Request
from .selection import select_documents
from .stream import dump_stream


@dataclass(frozen=True)
class Generated:
    environment: str
    stream: str  # the YAML stream for stdout
    count: int  # documents in it
    warnings: tuple[Problem, ...]  # non-blocking findings, for stderr


def chosen_environment(project: Project, request: Request) -> str:
    known = project.environment_names()
    if not request.environment:
        raise KrcError("no environment chosen: set the plugin parameter 'environment' (or the plugin env entry "
                       f"KRC_ENVIRONMENT) to one of: {', '.join(known) or '(none in environments/)'}")
    return project.select([request.environment])[0]


def generate(project: Project, request: Request, argocd_crds: str | None = None) -> Generated:
    """The documents `request` selects, or KrcError carrying every error (including error-level findings)."""
    name = chosen_environment(project, request)
    # schema validation, lint and the Argo CD CRDs, as for `krc render`: error-level findings raise
    render = pipeline.check_environment(pipeline.compile_environment(project, name), project, argocd_crds)
    documents = select_documents(render.objects, render.chart, request)
    if not documents:
        raise KrcError(f"environment {name} has nothing to deploy for crds={request.crds}, "
                       f"applications={request.applications}; refusing to print an empty stream (Argo CD would "
                       "prune everything): check the plugin parameters")
    return Generated(name, dump_stream(documents), len(documents), render.findings)


def init(project: Project, request: Request) -> list[vendor.VendorResult]:
    """Vendor the charts generate needs: the chosen environment's, or every environment's when none is chosen.
    Already vendored charts that match the lock are not downloaded again."""
    names = [chosen_environment(project, request)] if request.environment else project.environment_names()
    return pipeline.vendor_charts(project, names)


def describe(generated: Generated) -> str:
    """One line for stderr: what was printed (Argo CD logs the sidecar's stderr)."""
    return f"krc: {generated.environment}: {generated.count} documents"

