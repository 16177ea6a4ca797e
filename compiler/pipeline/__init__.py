"""The whole pipeline, top to bottom: load environment -> validate -> render -> check -> write or compare.

Every command of the CLI calls one function of this package, and it is the only package that loops over
environments: the stages below it (lint, policy, review, argocd, crddiff, output) each work on one compiled
environment or one set of CRDs. Nothing here prints or exits; bad input raises KrcError.

- `environments`: one environment compiled, validated and linted; the plain loop over a few of them.
- `context`, `jobs`, `lint_batch`, `review_batch`: many environments. Each one's compiled result comes from the
  compile cache (compile_cache.py) or is compiled, in worker processes when two or more need compiling, and a
  command keeps only what it needs of each (`EnvironmentResult`), so memory does not grow with their number.
- `golden`, `diff`, `linting`, `crds_and_argocd`, `autoscaling`, `everyday`: the commands.
"""
from ..render import Render
from .autoscaling import AutoscalerNodes, autoscaler_nodes, ray_versions
from .context import DEFAULT_RUN, EnvironmentResult, GoldenMismatch, RunOptions
from .crds_and_argocd import argocd_generate, argocd_init, compare_crd_sources, validate_argocd
from .diff import approve_crd_upgrade, review_project
from .environments import (
    Validated,
    autoscaler_of,
    check_environment,
    compile_environment,
    compile_environments,
    environment_findings,
    validate_render,
    validated_findings,
    vendor_charts,
)
from .everyday import (
    describe_rule,
    explain,
    init_environment,
    list_environments,
    rule_list,
    show_environment,
    versions,
)
from .golden import accept_golden, check_golden, compare_with_golden, render_to_disk
from .linting import PolicyCheck, check_policies, lint_environments, lint_targets

__all__ = [
    "DEFAULT_RUN", "AutoscalerNodes", "EnvironmentResult", "GoldenMismatch", "PolicyCheck", "Render", "RunOptions",
    "Validated", "accept_golden", "approve_crd_upgrade", "argocd_generate", "argocd_init", "autoscaler_nodes",
    "autoscaler_of", "check_environment", "check_golden", "check_policies", "compare_crd_sources",
    "compare_with_golden", "compile_environment", "compile_environments", "describe_rule", "environment_findings",
    "explain", "init_environment", "lint_environments", "lint_targets", "list_environments", "ray_versions",
    "render_to_disk", "review_project", "rule_list", "show_environment", "validate_argocd", "validate_render",
    "validated_findings", "vendor_charts", "versions",
]
