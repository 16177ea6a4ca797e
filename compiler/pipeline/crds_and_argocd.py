"""`krc crd-diff`, `krc vendor` and the `krc argocd` commands (validate, the plugin's generate and init).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from .. import argocd, crddiff
from ..argocd.validation import crds_path, environment_problems
from ..charts import vendor
from ..diagnostics.problems import KrcError, Problem, errors_among
from ..environment.model import load_environment
from ..policy.inputs import policy_findings, with_policy_settings
from ..project.lock import project_lock
from ..project.paths import Project, policy_files
from ..render.templates import Render
from ..results.compile_cache import POLICIES, CompileCache
from ..results.compiled_records import Compiled
from .context import Context, compile_cached
from .environments import chart_pin, compile_environment, compile_environments
from .plugin import plugin_output, policy_key
from .run_options import DEFAULT_RUN, RunOptions, argocd_crds_option


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
                    argocd_crds: str | None = None, run: RunOptions = DEFAULT_RUN) -> argocd.Generated:
    """`krc argocd generate`: one environment compiled and checked as for `krc render` (error-level findings
    raise), then the documents the plugin request selects. It reads or compiles that environment only."""
    request = argocd.read_request(environ, options)
    name = argocd.chosen_environment(project, request)
    # the plugin renders one environment and reads no other (destinations are lint's and review's business)
    context = Context.of(project, run, argocd_crds_option(argocd_crds), with_peers=False)
    compiled, render = compile_cached(project, context.cache, name, argocd_crds)
    return plugin_output(project, compiled, request, _policy_errors(project, context.cache, compiled, render))


def _policy_errors(project: Project, cache: CompileCache, compiled: Compiled, render: Render | None) \
        -> list[Problem]:
    """The project's policies on the environment (their verdict kept for warm answers): the error-level findings
    that remain after the environment's `lint.rules` settings."""
    key = policy_key(project, cache, compiled)
    if key is None:
        return []
    found = cache.findings(POLICIES, key)
    if found is None:
        render = render or compile_environment(project, compiled.name)
        found = policy_findings(project, [render], settings=False)[compiled.name]
        cache.store_findings(POLICIES, key, found)
    if not errors_among(found):
        return []
    render = render or compile_environment(project, compiled.name)
    ids = {f"policy/{p.stem}" for p in policy_files(project.policies_dir)}
    return errors_among(with_policy_settings(render, found, ids))


def argocd_init(project: Project, environ: Mapping[str, str],
                options: Mapping[str, str | None]) -> list[vendor.VendorResult]:
    """`krc argocd init`: vendor the charts generate needs: the chosen environment's, or every environment's
    when none is chosen. Already vendored charts that match the lock are not downloaded again."""
    request = argocd.read_request(environ, options)
    names = [argocd.chosen_environment(project, request)] if request.environment else project.environment_names()
    return vendor_charts(project, names)


def vendor_charts(project: Project, names: Sequence[str]) -> list[vendor.VendorResult]:
    """Download every chart the environments pin (and only what the cache lacks)."""
    pins = [chart_pin(load_environment(project, name)) for name in names]
    if vendor.up_to_date(project.vendor_dir, pins):
        return vendor.vendor(project.vendor_dir, pins)  # writes nothing: a read-only checkout works
    with project_lock(project):
        project.checked_output_dir(project.vendor_dir / "charts")
        return vendor.vendor(project.vendor_dir, pins)
