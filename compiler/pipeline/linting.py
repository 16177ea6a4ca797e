"""`krc lint` and `krc policy`: environments (or paths) through schema, rules and the organisation's policies.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import lint
from ..diagnostics.problems import KrcError, Problem, sorted_problems
from ..lint import lint_objects
from ..native import client
from ..policy import CueEngine, find_engine, policy_files
from ..project.paths import Project, find_project
from .context import Context
from .jobs import outcomes
from .plans import Job, Linted, LintPlan
from .run_options import DEFAULT_RUN, RunOptions, argocd_crds_option
from .work import Work


def _looks_like_path(target: str) -> bool:
    return "/" in target or target.endswith((".yaml", ".yml", ".json")) or target in (".", "..")


def lint_targets(targets: Sequence[str], project_root: Path | None = None, kuberay_version: str | None = None,
                 feature_gates: str = "", cwd: Path | None = None, argocd_crds: str | None = None,
                 run: RunOptions = DEFAULT_RUN) -> list[Problem]:
    """`krc lint`: paths when every target exists on disk, else environment names (none given: every
    environment). `argocd_crds` (a CRD file or folder) also validates Argo CD objects: in paths, and over each
    environment's own `argocd.crds`."""
    cwd = cwd or Path.cwd()
    paths = [cwd / t for t in targets]
    exists = [p.exists() for p in paths]
    if targets and all(exists):
        context = lint.paths_context(paths, kuberay_version, feature_gates, cwd)  # loaded for files only
        return lint_objects(dataclasses.replace(context, extra_crds=argocd_crds) if argocd_crds else context)
    missing = [t for t, e in zip(targets, exists, strict=True) if not e and _looks_like_path(t)]
    if missing:
        raise KrcError(f"{missing[0]} does not exist; pass existing YAML files or directories")
    if any(exists):
        raise KrcError("pass either paths or environment names, not both; lint them in two runs")
    if kuberay_version or feature_gates:
        raise KrcError("--kuberay-version and --feature-gates apply to paths; an environment pins its chart and "
                       "sets operator.featureGates")
    found = lint_environments(find_project(project_root or cwd), targets, argocd_crds, run)
    client.engine_done()  # what is left is reporting
    return sorted_problems(found)


def lint_environments(project: Project, names: Sequence[str], argocd_crds: str | None = None,
                      run: RunOptions = DEFAULT_RUN) -> list[Problem]:
    """Every finding of each environment: schema and rules over what it renders, its Argo CD objects against
    the Argo CD CRDs it names, and the organisation's policies. Every environment's input errors are reported
    together."""
    with client.collecting_at_limit():  # Ray's generator runs beside the engine: no room for a roomier target
        return policy_and_lint(project, project.select(names), run, argocd_crds, with_findings=True)


def policy_and_lint(project: Project, names: Sequence[str], run: RunOptions, argocd_crds: str | None,
                     with_findings: bool, engine: CueEngine | None = None, settings: bool = True) -> list[Problem]:
    """Batches of environments, each compiled (or taken from the cache) and put through the policies in one
    engine run for what the policy cache lacks; batches run in parallel, each sending its engine run from the process
    that compiled it (a few environments spread over several jobs without workers share runs at the end instead:
    policies_after). Without the engine (which renders the charts too) nothing is checked: KrcError saying how to
    build it."""
    if not names:
        return []
    if engine is None and policy_files(project.policies_dir):
        engine = find_engine()
    options = argocd_crds_option(argocd_crds)
    context = Context.of(project, run, options, workers=run.workers_for(Work.LINT, len(names)))
    plan = LintPlan(with_findings, engine, settings, argocd_crds=argocd_crds)
    jobs = [Job(plan, project.root, batch, run.cache, context.cache.shared, options)
            for batch in run.batches(names, run.policy_batch)]
    return [f for result in outcomes(context, jobs, run, Linted) for f in result.findings]


def policies_by_environment(project: Project, names: Sequence[str], run: RunOptions,
                            context: Context | None = None) -> dict[str, list[Problem]]:
    """The policies' findings of each environment (its `lint.rules` settings for policies applied); KrcError
    without the engine. `context`: the calling command's, when it has one (its cache has already gathered every
    environment's destination)."""
    if not names or not policy_files(project.policies_dir):
        return {}
    engine = find_engine()
    context = context or Context.of(project, run)
    jobs = [Job(LintPlan(findings=False, engine=engine), project.root, batch, run.cache, context.cache.shared)
            for batch in run.batches(names, run.policy_batch)]
    return {result.name: list(result.findings) for result in outcomes(context, jobs, run, Linted)}


@dataclass(frozen=True)
class PolicyCheck:
    policies: tuple[str, ...]
    environments: tuple[str, ...]
    findings: tuple[Problem, ...]


def check_policies(project: Project, names: Sequence[str] = (), engine: CueEngine | None = None,
                   run: RunOptions = DEFAULT_RUN) -> PolicyCheck:
    """`krc policy [ENV...]`: the policies in policies/ over what the environments render."""
    policies = policy_files(project.policies_dir)
    selected = project.select(tuple(names))
    if not policies:
        return PolicyCheck((), tuple(selected), ())
    engine = engine or find_engine()  # before compiling: no engine means nothing to do
    # policies judge what the environment renders; lint findings are `krc lint`'s to report (and no Ray generator
    # runs beside the engine)
    with client.roomy_engine():
        problems = policy_and_lint(project, selected, run, None, with_findings=False, engine=engine, settings=False)
    client.engine_done()  # what is left is reporting
    return PolicyCheck(tuple(p.stem for p in policies), tuple(selected), tuple(sorted_problems(problems)))
