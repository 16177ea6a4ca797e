"""`krc argocd generate` and `init`: the config-management plugin's commands, as pure functions.

generate compiles one environment from the files in the working tree and returns the whole YAML stream as one
string, so the command prints everything or nothing: Argo CD prunes whatever a partial or empty output lacks.
No network (charts come from vendor/), no clock, no writes inside the repository.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import pipeline
from ..charts import vendor
from ..problems import KrcError, Problem, has_errors, sorted_problems
from ..project import Project
from . import validation
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


def lint_problems(render: pipeline.Render) -> list[Problem]:
    """Everything `krc lint` reports for the environment (schema validation and rules)."""
    from ..lint import lint_objects  # imported here: init and errors before compiling never need it
    from ..lint.environments import environment_context

    return lint_objects(environment_context(render))


def generate(project: Project, request: Request, argocd_crds: str | None = None) -> Generated:
    """The documents `request` selects, or KrcError carrying every error (including error-level findings)."""
    name = chosen_environment(project, request)
    render = pipeline.compile_environment(project, name)
    problems = [*lint_problems(render),
                *validation.environment_problems(project, render.environment, render.objects, argocd_crds)]
    if has_errors(problems):
        raise KrcError(sorted_problems(p for p in problems if p.severity == "error"))
    documents = select_documents(render.objects, render.chart, request)
    if not documents:
        raise KrcError(f"environment {name} has nothing to deploy for crds={request.crds}, "
                       f"applications={request.applications}; refusing to print an empty stream (Argo CD would "
                       "prune everything): check the plugin parameters")
    return Generated(name, dump_stream(documents), len(documents), tuple(sorted_problems(problems)))


def init(project: Project, request: Request) -> list[vendor.VendorResult]:
    """Vendor the charts generate needs: the chosen environment's, or every environment's when none is chosen.
    Already vendored charts that match the lock are not downloaded again."""
    names = [chosen_environment(project, request)] if request.environment else project.environment_names()
    return pipeline.vendor_charts(project, names)


def describe(generated: Generated) -> str:
    """One line for stderr: what was printed (Argo CD logs the sidecar's stderr)."""
    return f"krc: {generated.environment}: {generated.count} documents"

