"""`krc autoscaler`: every cluster's node types as Ray's own autoscaler sees them.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..autoscaler import AutoscalerView, Batch, autoscaler_views, valid_ray_version
from ..diagnostics.problems import KrcError, Problem, sorted_problems
from ..environment.model import load_environment
from ..project.paths import Project
from ..review.ray_view import ClusterRows, cluster_rows
from .environments import Validated, compile_environments, ray_version, validate_render


@dataclass(frozen=True)
class AutoscalerNodes:
    environment: str
    ray_version: str
    clusters: tuple[ClusterRows, ...]


def autoscaler_nodes(project: Project, names: Sequence[str], cluster: str = "") -> list[AutoscalerNodes]:
    """`krc autoscaler ENV... [--cluster NAME]`: every cluster's (or the named object's) node types as Ray's
    autoscaler sees them, beside Kubernetes' figures. A Ray version without its generator is bad input (exit 2)
    saying how to install it, and so is a cluster name no environment renders."""
    renders = compile_environments(project, project.select(list(names)), lint=False)
    views = autoscaler_of(project, [validate_render(r) for r in renders])
    missing = [Problem(view.unavailable, r.environment.location_of(("ray", "version")))
               for r, view in zip(renders, views, strict=True) if view.unavailable]
    if missing:
        raise KrcError(sorted_problems(set(missing)))
    found = [AutoscalerNodes(r.environment.name, view.ray_version, tuple(cluster_rows(
        (o.document for o in r.objects if not cluster or (o.document.get("metadata") or {}).get("name") == cluster),
        view))) for r, view in zip(renders, views, strict=True)]
    if cluster and not any(env.clusters for env in found):
        raise KrcError(f"no RayCluster, RayJob, RayService or RayCronJob named '{cluster}' in "
                       f"{', '.join(r.environment.name for r in renders)}; run 'krc autoscaler' to list them")
    return found


def ray_versions(project: Project) -> list[str]:
    """The Ray versions the environments name (`make ray-generators` installs one generator for each); a value
    that is not a release version is left to `krc lint` to report, never handed to a shell or pip."""
    versions = {ray_version(load_environment(project, name)) for name in project.environment_names()}
    return sorted(v for v in versions if valid_ray_version(v))


def autoscaler_of(project: Project, validated: Sequence[Validated], autoscaled_only: bool = False) \
        -> list[AutoscalerView]:
    """What Ray's autoscaling-config generator (of each environment's ray.version) makes of every cluster spec
    the environments render (`autoscaled_only`: of those an autoscaler reads, all the lint rules ask about),
    stored objects as the autoscaler reads them: one process for all of them."""
    return autoscaler_views(project.root, [Batch(ray_version(v.render.environment),
                                                 tuple(o.document for o in v.context.objects)) for v in validated],
                            autoscaled_only)
