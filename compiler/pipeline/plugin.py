"""The plugin's `krc argocd generate` from the compile cache alone: Argo CD runs it for every manifest request,
so a warm answer imports only this module's few light dependencies (no templates engines, schemas, rules or CUE).
On a miss the CLI falls back on `argocd_generate`, which compiles and checks the environment and fills the cache.
"""
from __future__ import annotations

from collections.abc import Mapping

from .. import argocd
from ..charts import vendored
from ..compile_cache import CompileCache, Compiled
from ..problems import KrcError, errors_among
from ..project import Project
from .run_options import DEFAULT_RUN, RunOptions, argocd_crds_option


def plugin_output(project: Project, compiled: Compiled, request: argocd.Request) -> argocd.Generated:
    """The documents `request` selects from one compiled environment; its error-level findings are bad input."""
    errors = errors_among(compiled.findings)
    if errors:
        raise KrcError(errors)
    name, version = compiled.chart
    crds = vendored.load_vendored_chart(project.vendor_dir, name, version).crds if request.crds != "exclude" else ()
    return argocd.generated(argocd.CheckedEnvironment(compiled.name, version, crds, compiled.objects,
                                                      compiled.chart_objects, compiled.findings), request)


def generate_from_cache(project: Project, environ: Mapping[str, str], options: Mapping[str, str | None],
                        argocd_crds: str | None = None, run: RunOptions = DEFAULT_RUN) -> argocd.Generated | None:
    """The plugin's output when the compile cache holds a trustworthy result for the environment, else None."""
    request = argocd.read_request(environ, options)
    name = argocd.chosen_environment(project, request)
    compiled = CompileCache(project, run.cache, argocd_crds_option(argocd_crds)).lookup(name)
    return None if compiled is None else plugin_output(project, compiled, request)
