"""`krc lint`: schema validation plus KubeRay rules over manifests (paths) or compiled environments.

Public entry points: `lint_targets` (what the command runs), `lint_objects(context)` (schema + rules, for
`krc render` to refuse error-level findings) and `run_rules(context)` (rules only).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from ..problems import KrcError, Problem, sorted_problems
from ..project import find_project
from .context import LintContext, LintObject, RuleSetting

__all__ = ["LintContext", "LintObject", "RuleSetting", "lint_objects", "lint_targets", "run_rules"]


def run_rules(context: LintContext) -> list[Problem]:
    """Every applicable rule (no schema step); imported lazily: the rules themselves import lint modules."""
    from .runner import run_rules as run

    return run(context)


def lint_objects(context: LintContext) -> list[Problem]:
    """Schema validation and defaulting, then the rules: every finding for the context."""
    from .runner import lint_objects as lint

    return lint(context)


def _looks_like_path(target: str) -> bool:
    return "/" in target or target.endswith((".yaml", ".yml", ".json")) or target in (".", "..")


def lint_targets(targets: list[str], project_root: Path | None = None, kuberay_version: str | None = None,
                 feature_gates: str = "", cwd: Path | None = None, argocd_crds: str | None = None) -> list[Problem]:
    """Paths when every target exists on disk, else environment names (none given: every environment).
    `argocd_crds` (a CRD file or folder) also validates Argo CD objects: in paths, and over each environment's
    own `argocd.crds`."""
    cwd = cwd or Path.cwd()
    paths = [cwd / t for t in targets]
    exists = [p.exists() for p in paths]
    if targets and all(exists):
        from .paths import paths_context

        context = paths_context(paths, kuberay_version, feature_gates, cwd)
        return lint_objects(dataclasses.replace(context, extra_crds=argocd_crds) if argocd_crds else context)
    missing = [t for t, e in zip(targets, exists) if not e and _looks_like_path(t)]
    if missing:
        raise KrcError(f"{missing[0]} does not exist; pass existing YAML files or directories")
    if any(exists):
        raise KrcError("pass either paths or environment names, not both; lint them in two runs")
    if kuberay_version or feature_gates:
        raise KrcError("--kuberay-version and --feature-gates apply to paths; an environment pins its chart and "
                       "sets operator.featureGates")
    from .environments import environment_findings

    return sorted_problems(environment_findings(find_project(project_root or cwd), targets, argocd_crds))
