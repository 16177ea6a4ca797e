"""An idle timeout someone set is the one Ray's autoscaler applies.

The autoscaler's config generator reads `autoscalerOptions.idleTimeoutSeconds` (as `idle_timeout_minutes`) and
each worker group's `idleTimeoutSeconds` (as the node type's `idle_timeout_s`, honoured by autoscaler v2 only).
A timeout on a cluster without `enableInTreeAutoscaling` is read by nobody. In an environment file,
`autoscaling.idleTimeoutSeconds` and a group's `idleTimeoutSeconds` are compared with the generator's config of
the rendered cluster when it is autoscaled (krc renders a group's timeout only for autoscaler v2), and reported
from the rendered spec alone when it is not (krc renders neither without autoscaling: nobody applies them).

Fails:

    # environments/dev.yaml
    clusters:
    - name: demo
      autoscaling: {enabled: true, version: v1}
      workerGroups:
      - {name: cpu, maxReplicas: 2, cpu: 1, memory: 2Gi, idleTimeoutSeconds: 300}

Passes:

    clusters:
    - name: demo
      autoscaling: {enabled: true, version: v2}
      workerGroups:
      - {name: cpu, maxReplicas: 2, cpu: 1, memory: 2Gi, idleTimeoutSeconds: 300}
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..diagnostics.problems import Problem
from ..documents.yamlio import Path
from .rule import About
from .support.autoscaler_clusters import ScaledCluster, environment_cluster, scaled_clusters, unscaled_clusters
from .support.context import LintContext
from .support.ray_objects import ClusterView

ABOUT = About("autoscaler/idle-timeout-ignored", "warning",
              "an idle timeout that is set is the one Ray's autoscaler config applies",
              reads_autoscaler_view=True)

_NOBODY = "autoscaling is not enabled, so no autoscaler applies it"


def _seconds(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _autoscaling(item: dict[str, Any]) -> dict[str, Any]:
    found = item.get("autoscaling")
    return found if isinstance(found, dict) else {}


def _groups(item: dict[str, Any]) -> Iterator[tuple[str, float]]:
    """(name, timeout) of each worker group the environment item gives an idle timeout."""
    for group in item.get("workerGroups") or []:
        if isinstance(group, dict) and (wanted := _seconds(group.get("idleTimeoutSeconds"))) is not None:
            yield str(group.get("name")), wanted


def _spec_findings(cluster: ClusterView) -> Iterator[Problem]:
    """Timeouts in the rendered spec of a cluster nobody autoscales."""
    places = [(cluster.at("autoscalerOptions", "idleTimeoutSeconds"), cluster.autoscaler_options)]
    places += [(g.path + ("idleTimeoutSeconds",), g.spec) for g in cluster.workers]
    for path, holder in places:
        value = _seconds(holder.get("idleTimeoutSeconds"))
        if value is not None:
            yield cluster.obj.problem(f"idleTimeoutSeconds {value:g} is set but enableInTreeAutoscaling is not "
                                      "true, so no autoscaler applies it; turn autoscaling on or remove it", path)


def _unscaled_environment_findings(context: LintContext, cluster: ClusterView) -> Iterator[Problem]:
    """Timeouts the environment file asks for on a cluster it renders without autoscaling."""
    found = environment_cluster(context, cluster)
    if found is None:
        return
    path, item = found
    wanted = _seconds(_autoscaling(item).get("idleTimeoutSeconds"))
    if wanted is not None:
        yield _cluster_timeout(context, path, wanted, _NOBODY)
    rendered = {group.name for group in cluster.workers}
    for name, wanted in _groups(item):
        if name in rendered:
            yield _group_timeout(context, path, name, wanted, _NOBODY, "enable autoscaling or remove it")


def _environment_findings(context: LintContext, scaled: ScaledCluster) -> Iterator[Problem]:
    """Timeouts the environment file asks for, against the generator's config of the autoscaled cluster."""
    found = environment_cluster(context, scaled.view)
    if found is None:
        return
    path, item = found
    applied = scaled.config.idle_timeout_minutes * 60
    wanted = _seconds(_autoscaling(item).get("idleTimeoutSeconds"))
    if wanted is not None and abs(applied - wanted) > 1e-6:
        yield _cluster_timeout(context, path, wanted, f"Ray {scaled.config.ray_version}'s autoscaler config idles "
                                                      f"workers out after {applied:g} s")
    for name, wanted in _groups(item):
        node = scaled.config.node_type(name)
        if node is None or (scaled.view.autoscaler_v2 and node.idle_timeout_s == wanted):
            continue
        own = "no idle timeout of its own" if node.idle_timeout_s is None else f"{node.idle_timeout_s:g} s"
        why = (f"Ray {scaled.config.ray_version}'s autoscaler config gives group '{node.name}' {own}, so its "
               f"workers idle out after {applied:g} s")
        yield _group_timeout(context, path, name, wanted, why,
                             "set autoscaling.version: v2 (only v2 applies per-group timeouts)")


def _cluster_timeout(context: LintContext, path: Path, wanted: float, why: str) -> Problem:
    return context.environment_problem(
        f"autoscaling.idleTimeoutSeconds is {wanted:g} but {why}; make the rendered cluster carry it "
        "(autoscalerOptions.idleTimeoutSeconds) or remove it", (*path, "autoscaling", "idleTimeoutSeconds"))


def _group_timeout(context: LintContext, path: Path, name: str, wanted: float, why: str,
                   fix: str) -> Problem:
    return context.environment_problem(f"worker group '{name}' sets idleTimeoutSeconds {wanted:g} but {why}; {fix}",
                                       (*path, "workerGroups", name, "idleTimeoutSeconds"))


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in unscaled_clusters(context):
        yield from _spec_findings(cluster)
        yield from _unscaled_environment_findings(context, cluster)
    for scaled in scaled_clusters(context):
        yield from _environment_findings(context, scaled)
