"""The plugin's `krc argocd generate` from the compile cache alone: Argo CD runs it for every manifest request,
so a warm answer imports only this module's few light dependencies (no templates engines, schemas, rules or CUE).
On a miss the CLI falls back on `argocd_generate`, which compiles and checks the environment and fills the cache.

The plugin enforces the project's policies: Argo CD refuses to sync what CI refuses to merge. A warm answer
takes the policies' verdict from the policy cache (kept under the compiled result, the policy files' bytes and
the engine build); a verdict with an error, or none kept, goes to the compiling path, which evaluates the
policies, applies the environment's `lint.rules` settings for them and refuses on an error that remains.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from .. import argocd
from ..charts import vendored
from ..diagnostics.problems import KrcError, Problem, errors_among, sorted_problems
from ..native.binary import engine_identity
from ..project.paths import Project, policy_files
from ..results.compile_cache import POLICIES, CompileCache
from ..results.compiled_records import Compiled
from .run_options import DEFAULT_RUN, RunOptions, argocd_crds_option


def plugin_output(project: Project, compiled: Compiled, request: argocd.Request,
                  policy_errors: Sequence[Problem] = ()) -> argocd.Generated:
    """The documents `request` selects from one compiled environment; its error-level findings and those of the
    policies are bad input."""
    errors = errors_among(compiled.findings) + list(policy_errors)
    if errors:
        raise KrcError(sorted_problems(errors))
    name, version = compiled.chart
    crds = vendored.load_vendored_crds(project.vendor_dir, name, version) if request.crds != "exclude" else ()
    return argocd.generated(argocd.CheckedEnvironment(compiled.name, version, crds, compiled.objects,
                                                      compiled.chart_objects, compiled.findings), request)


def generate_from_cache(project: Project, environ: Mapping[str, str], options: Mapping[str, str | None],
                        argocd_crds: str | None = None, run: RunOptions = DEFAULT_RUN) -> argocd.Generated | None:
    """The plugin's output when the compile cache holds a trustworthy result for the environment, else None."""
    request = argocd.read_request(environ, options)
    name = argocd.chosen_environment(project, request)
    cache = CompileCache(project, run.cache, argocd_crds_option(argocd_crds))
    compiled = cache.lookup(name)
    if compiled is None:
        return None
    if not errors_among(compiled.findings) and not policies_passed(project, cache, compiled):
        return None  # refused already by its own findings, or else judged by the policies on the compiling path
    return plugin_output(project, compiled, request)


def policy_key(project: Project, cache: CompileCache, compiled: Compiled) -> str | None:
    """Where the policy cache keeps this compiled result's verdict; None when the project has no policies."""
    policies = policy_files(project.policies_dir)
    if not policies:
        return None
    return cache.policy_key(compiled.key, compiled.inputs_digest, policies, engine_identity())


def policies_passed(project: Project, cache: CompileCache, compiled: Compiled) -> bool:
    """Whether the kept verdict of the policies has no error (settings only ever lower a finding, so a kept
    verdict without one needs no settings applied); False when none is kept."""
    key = policy_key(project, cache, compiled)
    if key is None:
        return True
    found = cache.findings(POLICIES, key)
    return found is not None and not errors_among(found)
