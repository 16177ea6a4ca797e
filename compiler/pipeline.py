"""The whole pipeline, top to bottom: load environment -> validate -> render -> check -> write or compare.

Every command of the CLI calls one function here, and this is the only module that loops over environments:
the stages below it (lint, policy, review, argocd, crddiff, output) each work on one compiled environment or
one set of CRDs. Nothing here prints or exits; bad input raises KrcError.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import argocd, crddiff, output, review
from .argocd.validation import crds_path, environment_problems
from .charts import vendor
from .environment.model import Environment, load_environment
from .k8s.secrets import REDACTED, names_credential, redact_at
from .lint import environment_context, lint_objects, paths_context
from .policy import CueEngine, find_engine, policy_files, policy_findings, policy_input
from .policy.evaluate import evaluate_policies
from .problems import KrcError, Location, Problem, sorted_problems
from .project import Project, find_project
from .render import Render, render_environment


def chart_pin(env: Environment) -> vendor.ChartPin:
    chart = env.data["operator"]["chart"]
    name, version = str(chart["name"]), str(chart["version"])
    problem = vendor.chart_pin_problem(name, version)
    if problem:  # before the name or version touches a path
        field = "name" if "name" in problem.split(" is ")[0] else "version"
        raise KrcError(problem, env.location_of(("operator", "chart", field)))
    return vendor.ChartPin(name, version, str(chart["repository"]))


def compile_environment(project: Project, name: str) -> Render:
    env = load_environment(project, name)
    pin = chart_pin(env)
    chart = vendor.load_vendored_chart(project.vendor_dir, pin.name, pin.version)
    return render_environment(project, env, chart)


def environment_findings(render: Render, project: Project | None = None,
                         argocd_crds: str | None = None) -> list[Problem]:
    """Every finding about what an environment renders: schema and rules against the pinned CRDs, and (given the
    project) its Argo CD objects against the Argo CD CRDs it names or `argocd_crds`."""
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


def compile_environments(project: Project, names: Sequence[str], lint: bool = True) -> list[Render]:
    """Every named environment, checked, or every problem of all of them (one bad file does not hide another)."""
    renders: list[Render] = []
    problems: list[Problem] = []
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


def vendor_charts(project: Project, names: Sequence[str]) -> list[vendor.VendorResult]:
    """Download every chart the environments pin (and only what the cache lacks)."""
    pins = [chart_pin(load_environment(project, name)) for name in names]
    if vendor.up_to_date(project.vendor_dir, pins):
        return vendor.vendor(project.vendor_dir, pins)  # writes nothing: a read-only checkout works
    with output.project_lock(project):
        project.checked_output_dir(project.vendor_dir / "charts")
        return vendor.vendor(project.vendor_dir, pins)


def render_to_disk(project: Project, names: Sequence[str]) -> list[Render]:
    """rendered/<env>/ for every environment, written only once all of them compiled cleanly."""
    renders = compile_environments(project, names)
    output.replace_trees({project.rendered_dir / r.environment.name: output.render_files(r, include_crds=True)
                          for r in renders}, project)
    return renders


def accept_golden(project: Project, names: Sequence[str]) -> list[Render]:
    """golden/<env>/ becomes the current render, CRD lock included."""
    renders = compile_environments(project, names)
    output.replace_trees({project.golden_dir / r.environment.name: output.render_files(r, include_crds=False)
                          for r in renders}, project)
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
    current = output.render_files(render, include_crds=False)
    golden = output.read_tree(golden_dir / render.environment.name)
    return GoldenMismatch(
        render.environment.name,
        tuple(sorted(p for p in current.keys() & golden.keys() if current[p] != golden[p])),
        tuple(sorted(current.keys() - golden.keys())),
        tuple(sorted(golden.keys() - current.keys())))


def check_golden(project: Project, names: Sequence[str]) -> list[GoldenMismatch]:
    return [compare_with_golden(r, project.golden_dir) for r in compile_environments(project, names)]


def review_project(project: Project, names: Sequence[str], base: str | None = None) -> review.Review:
    """`krc diff`: the named environments against golden/ (the working tree, or as committed at `base`)."""
    source = review.golden_source(project, base)
    renders = compile_environments(project, names)
    return review.Review(source.description, base,
                         tuple(review.review_environment(project, r, source.files(r.environment.name))
                               for r in renders))


@dataclass(frozen=True)
class Explanation:
    environment: str
    path: str
    value: object
    chain: tuple[Location, ...]  # earliest first


def explain(project: Project, name: str, dotted: str) -> Explanation:
    env = load_environment(project, name)
    path = env.resolve_dotted(dotted)
    value = env.get(path)
    parent = env.get(path[:-1]) if path else None
    # credentials are shown as *** (an env item's value, or anything holding one); files keep them
    if path and path[-1] == "value" and isinstance(parent, dict) and names_credential(str(parent.get("name", ""))):
        value = REDACTED
    else:
        value = redact_at(".".join(map(str, path)), value)
    return Explanation(name, ".".join(map(str, path)), value, tuple(env.chain_of(path)))


# ---- lint and policies ---------------------------------------------------------------------------------------

def _looks_like_path(target: str) -> bool:
    return "/" in target or target.endswith((".yaml", ".yml", ".json")) or target in (".", "..")


def lint_targets(targets: Sequence[str], project_root: Path | None = None, kuberay_version: str | None = None,
                 feature_gates: str = "", cwd: Path | None = None, argocd_crds: str | None = None) -> list[Problem]:
    """`krc lint`: paths when every target exists on disk, else environment names (none given: every
    environment). `argocd_crds` (a CRD file or folder) also validates Argo CD objects: in paths, and over each
    environment's own `argocd.crds`."""
    cwd = cwd or Path.cwd()
    paths = [cwd / t for t in targets]
    exists = [p.exists() for p in paths]
    if targets and all(exists):
        context = paths_context(paths, kuberay_version, feature_gates, cwd)
        return lint_objects(dataclasses.replace(context, extra_crds=argocd_crds) if argocd_crds else context)
    missing = [t for t, e in zip(targets, exists, strict=True) if not e and _looks_like_path(t)]
    if missing:
        raise KrcError(f"{missing[0]} does not exist; pass existing YAML files or directories")
    if any(exists):
        raise KrcError("pass either paths or environment names, not both; lint them in two runs")
    if kuberay_version or feature_gates:
        raise KrcError("--kuberay-version and --feature-gates apply to paths; an environment pins its chart and "
                       "sets operator.featureGates")
    return sorted_problems(lint_environments(find_project(project_root or cwd), targets, argocd_crds))


def lint_environments(project: Project, names: Sequence[str], argocd_crds: str | None = None) -> list[Problem]:
    """Every finding of each environment: schema and rules over what it renders, its Argo CD objects against
    the Argo CD CRDs it names, and the organisation's policies. Every environment's input errors are reported
    together."""
    findings: list[Problem] = []
    problems: list[Problem] = []
    renders: list[Render] = []
    for name in project.select(list(names)):
        try:
            render = compile_environment(project, name)
            findings.extend(environment_findings(render, project, argocd_crds))
            renders.append(render)
        except KrcError as err:
            problems.extend(err.problems)
    if problems:
        raise KrcError(problems)
    return findings + lint_policies(project, renders)


def lint_policies(project: Project, renders: Sequence[Render]) -> list[Problem]:
    """The organisation's CUE policies (policies/*.cue), in one engine run for every environment.

    They are the organisation's rules, so an environment's `lint.rules` settings do not change them. Without a
    CUE engine the other findings are still reported, plus an error saying the policies were not checked: a CI
    job without the engine must not pass as if they had been.
    """
    if not renders or not policy_files(project.policies_dir):
        return []
    try:
        engine = find_engine([project.root])
    except KrcError as err:
        return [Problem(f"the policies in policies/ were not checked: {err.problems[0].message}",
                        Location(project.relative(project.policies_dir)), "error", "policy/engine")]
    return policy_findings(project, renders, engine)


@dataclass(frozen=True)
class PolicyCheck:
    policies: tuple[str, ...]
    environments: tuple[str, ...]
    findings: tuple[Problem, ...]


def check_policies(project: Project, names: Sequence[str] = (), engine: CueEngine | None = None) -> PolicyCheck:
    """`krc policy [ENV...]`: the policies in policies/ over what the environments render."""
    policies = policy_files(project.policies_dir)
    selected = project.select(tuple(names))
    if not policies:
        return PolicyCheck((), tuple(selected), ())
    engine = engine or find_engine([project.root])  # before compiling: no engine means nothing to do
    # policies judge what the environment renders; lint findings are `krc lint`'s to report
    inputs = [policy_input(r) for r in compile_environments(project, selected, lint=False)]
    problems = evaluate_policies(project.policies_dir, inputs, engine=engine, show_path=project.relative)
    return PolicyCheck(tuple(p.stem for p in policies), tuple(selected), tuple(problems))


# ---- CRDs and Argo CD ----------------------------------------------------------------------------------------

def compare_crd_sources(old: str, new: str, project_root: Path | None) -> list[crddiff.CrdChange]:
    """`krc crd-diff OLD NEW`: every change between two CRD sets (files, folders, chart archives, NAME@VERSION)."""
    return crddiff.compare_crds(crddiff.load_crd_source(old, project_root),
                                crddiff.load_crd_source(new, project_root))


def validate_argocd(project: Project, names: Sequence[str], override: str | None) -> list[Problem]:
    """`krc argocd validate`: every environment's Argo CD objects against the named or configured CRDs."""
    problems: list[Problem] = []
    for render in compile_environments(project, project.select(list(names)), lint=False):
        if override is None and crds_path(project, render.environment) is None:
            raise KrcError(f"environment {render.environment.name} names no Argo CD CRDs: pass --crds or set "
                           "argocd.crds")
        problems.extend(environment_problems(project, render.environment, render.objects, override))
    return problems


def argocd_generate(project: Project, environ: Mapping[str, str], options: Mapping[str, str | None],
                    argocd_crds: str | None = None) -> argocd.Generated:
    """`krc argocd generate`: one environment compiled and checked as for `krc render` (error-level findings
    raise), then the documents the plugin request selects."""
    request = argocd.read_request(environ, options)
    name = argocd.chosen_environment(project, request)
    render = check_environment(compile_environment(project, name), project, argocd_crds)
    return argocd.generated(render, request)


def argocd_init(project: Project, environ: Mapping[str, str],
                options: Mapping[str, str | None]) -> list[vendor.VendorResult]:
    """`krc argocd init`: vendor the charts generate needs: the chosen environment's, or every environment's
    when none is chosen. Already vendored charts that match the lock are not downloaded again."""
    request = argocd.read_request(environ, options)
    names = [argocd.chosen_environment(project, request)] if request.environment else project.environment_names()
    return vendor_charts(project, names)
