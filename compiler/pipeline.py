"""The whole pipeline, top to bottom: load environment -> validate -> render -> check -> write or compare.

Every command calls one function here. Nothing here prints or exits; bad input raises KrcError.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from . import output
from .charts import vendor
from .charts.package import Chart
from .environment.model import Environment, load_environment
from .problems import KrcError, Problem, sorted_problems
from .project import Project
from .render import RenderedObject, render_environment


@dataclass(frozen=True)
class Render:
    """One environment compiled in memory."""

    environment: Environment
    chart: Chart
    helm_values: dict
    objects: tuple[RenderedObject, ...]
    findings: tuple[Problem, ...] = ()  # schema and lint findings below error level (errors stop the pipeline)

    def files(self, include_crds: bool) -> output.Files:
        return output.environment_files([o.document for o in self.objects], self.helm_values, self.chart,
                                        include_crds)


def chart_pin(env: Environment) -> vendor.ChartPin:
    chart = env.data["operator"]["chart"]
    return vendor.ChartPin(str(chart["name"]), str(chart["version"]), str(chart["repository"]))


def compile_environment(project: Project, name: str) -> Render:
    env = load_environment(project, name)
    pin = chart_pin(env)
    chart = vendor.load_vendored_chart(project.vendor_dir, pin.name, pin.version)
    rendered = render_environment(project, env, chart)
    return Render(env, chart, rendered.helm_values, rendered.objects)


def environment_findings(render: Render, project: Project | None = None,
                         argocd_crds: str | None = None) -> list[Problem]:
    """Every finding about what an environment renders: schema and rules against the pinned CRDs, and (given the
    project) its Argo CD objects against the Argo CD CRDs it names or `argocd_crds`."""
    # imported here: the lint and argocd packages build on this module's Render
    from .argocd.validation import environment_problems
    from .lint import lint_objects
    from .lint.environments import environment_context

    findings = lint_objects(environment_context(render))
    if project is not None:
        findings += environment_problems(project, render.environment, render.objects, argocd_crds)
    return sorted_problems(findings)


def check_environment(render: Render, project: Project | None = None, argocd_crds: str | None = None) -> Render:
    """The render with its findings; error-level findings stop the pipeline."""
    findings = environment_findings(render, project, argocd_crds)
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        raise KrcError(errors)
    return dataclasses.replace(render, findings=tuple(findings))


def compile_environments(project: Project, names: list[str], lint: bool = True) -> list[Render]:
    """Every named environment, checked, or every problem of all of them (one bad file does not hide another)."""
    renders, problems = [], []
    for name in names:
        try:
            render = compile_environment(project, name)
            renders.append(check_environment(render, project) if lint else render)
        except KrcError as err:
            problems.extend(err.problems)
    if problems:
        # a shared template or layer fails the same way for every environment: say it once
        raise KrcError(sorted_problems(set(problems)))
    return renders


def vendor_charts(project: Project, names: list[str]) -> list[vendor.VendorResult]:
    """Download every chart the environments pin (and only what the cache lacks)."""
    pins = [chart_pin(load_environment(project, name)) for name in names]
    return vendor.vendor(project.vendor_dir, pins)


def render_to_disk(project: Project, names: list[str]) -> list[Render]:
    """rendered/<env>/ for every environment, written only once all of them compiled cleanly."""
    renders = compile_environments(project, names)
    output.replace_trees({project.rendered_dir / r.environment.name: r.files(include_crds=True) for r in renders})
    return renders


def accept_golden(project: Project, names: list[str]) -> list[Render]:
    """golden/<env>/ becomes the current render, CRD lock included."""
    renders = compile_environments(project, names)
    output.replace_trees({project.golden_dir / r.environment.name: r.files(include_crds=False) for r in renders})
    return renders


@dataclass(frozen=True)
class GoldenMismatch:
    environment: str
    changed: tuple[str, ...]
    added: tuple[str, ...]  # rendered but not in golden
    removed: tuple[str, ...]  # in golden but no longer rendered

    @property
    def clean(self) -> bool:
        return not (self.changed or self.added or self.removed)


def compare_with_golden(render: Render, golden_dir: Path) -> GoldenMismatch:
    current = render.files(include_crds=False)
    golden = output.read_tree(golden_dir / render.environment.name)
    return GoldenMismatch(
        render.environment.name,
        tuple(sorted(p for p in current.keys() & golden.keys() if current[p] != golden[p])),
        tuple(sorted(current.keys() - golden.keys())),
        tuple(sorted(golden.keys() - current.keys())))


def check_golden(project: Project, names: list[str]) -> list[GoldenMismatch]:
    return [compare_with_golden(r, project.golden_dir) for r in compile_environments(project, names)]


@dataclass(frozen=True)
class Explanation:
    environment: str
    path: str
    value: object
    chain: tuple  # Locations, earliest first


def explain(project: Project, name: str, dotted: str) -> Explanation:
    env = load_environment(project, name)
    path = env.resolve_dotted(dotted)
    return Explanation(name, ".".join(map(str, path)), env.get(path), env.chain_of(path))
