"""The whole pipeline, top to bottom: load environment -> validate -> render -> check -> write or compare.

Every command of the CLI calls one function of this package, and it is the only package that loops over
environments: the stages below it (lint, policy, review, argocd, crddiff, output) each work on one compiled
environment or one set of CRDs. Nothing here prints or exits; bad input raises KrcError.

- `environments`: one environment compiled, validated and linted; the plain loop over a few of them.
- `plans`: what each command asks of a batch of environments (RenderPlan, AcceptPlan, CheckPlan, ReviewPlan,
  LintPlan) and the record each gives back per environment (Written, Checked, Reviewed, Linted): only what the
  command needs of each, so memory does not grow with their number.
- `jobs`: the one executor. It runs a plan's jobs, each environment's compiled result from the compile cache
  (compile_cache.py) or compiled, in worker processes when enough need compiling; `context`, `lint_batch`,
  `review_batch`, `policies_after` are its steps.
- `golden`, `diff`, `linting`, `crds_and_argocd`, `autoscaling`, `everyday`: the commands; `plugin`: the plugin's
  `generate` answered from the compile cache alone.

Names are imported from their module when first used (PEP 562): `krc argocd generate`, which Argo CD runs for
every manifest request, then loads the light `plugin` module and the compiling stack only on a cache miss.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import lazy_exports

if TYPE_CHECKING:  # the names as the type checker and the import-layer contract see them
    from ..render.templates import Render
    from .autoscaling import AutoscalerNodes, autoscaler_nodes, autoscaler_of, ray_versions
    from .crds_and_argocd import argocd_generate, argocd_init, compare_crd_sources, validate_argocd, vendor_charts
    from .diff import approve_crd_upgrade, review_project
    from .engine_ahead import start_engine_ahead
    from .environments import (
        Validated,
        check_environment,
        compile_environment,
        compile_environments,
        environment_findings,
        validate_render,
        validated_findings,
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
    from .lint_batch import has_lint_result, lint_basis, lints_of_batch
    from .linting import PolicyCheck, check_policies, lint_environments, lint_targets, policies_by_environment
    from .pinned_crds import send_pinned_crds
    from .plans import EnvironmentResult, GoldenMismatch, Written
    from .plugin import generate_from_cache
    from .policies_after import finish_policies
    from .review_batch import reviews_of_batch
    from .run_options import DEFAULT_RUN, RunOptions
    from .worker_pool import new_pool

# name -> the module (relative to this package) that defines it
_EXPORTS = {
    "Render": "..render.templates", "AutoscalerNodes": ".autoscaling", "autoscaler_nodes": ".autoscaling",
    "ray_versions": ".autoscaling", "EnvironmentResult": ".plans", "GoldenMismatch": ".plans",
    "Written": ".plans",
    "argocd_generate": ".crds_and_argocd", "argocd_init": ".crds_and_argocd",
    "compare_crd_sources": ".crds_and_argocd", "validate_argocd": ".crds_and_argocd", "approve_crd_upgrade": ".diff",
    "review_project": ".diff", "Validated": ".environments", "autoscaler_of": ".autoscaling",
    "check_environment": ".environments", "compile_environment": ".environments",
    "compile_environments": ".environments", "environment_findings": ".environments",
    "validate_render": ".environments", "validated_findings": ".environments", "vendor_charts": ".crds_and_argocd",
    "describe_rule": ".everyday", "explain": ".everyday", "init_environment": ".everyday",
    "list_environments": ".everyday", "rule_list": ".everyday", "show_environment": ".everyday",
    "versions": ".everyday", "accept_golden": ".golden", "check_golden": ".golden", "compare_with_golden": ".golden",
    "render_to_disk": ".golden", "PolicyCheck": ".linting", "check_policies": ".linting",
    "lint_environments": ".linting", "lint_targets": ".linting", "policies_by_environment": ".linting",
    "generate_from_cache": ".plugin",
    "reviews_of_batch": ".review_batch", "lints_of_batch": ".lint_batch", "lint_basis": ".lint_batch",
    "has_lint_result": ".lint_batch", "finish_policies": ".policies_after", "send_pinned_crds": ".pinned_crds",
    "start_engine_ahead": ".engine_ahead",
    "DEFAULT_RUN": ".run_options", "RunOptions": ".run_options", "new_pool": ".worker_pool",
}
__all__ = [  # the same names, spelled out for the type checker
    "AutoscalerNodes", "DEFAULT_RUN", "EnvironmentResult", "GoldenMismatch", "PolicyCheck", "Render", "RunOptions",
    "Validated", "accept_golden", "approve_crd_upgrade", "argocd_generate", "argocd_init", "autoscaler_nodes",
    "autoscaler_of", "check_environment", "check_golden", "check_policies", "compare_crd_sources",
    "compare_with_golden", "compile_environment", "compile_environments", "describe_rule", "environment_findings",
    "explain", "finish_policies", "generate_from_cache", "has_lint_result", "init_environment", "lint_basis",
    "lint_environments", "lint_targets", "lints_of_batch", "list_environments", "new_pool", "policies_by_environment",
    "ray_versions", "render_to_disk", "review_project", "reviews_of_batch", "rule_list", "send_pinned_crds",
    "show_environment", "start_engine_ahead", "validate_argocd", "validate_render", "validated_findings",
    "vendor_charts", "versions", "Written",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
