"""An idle timeout someone set is the one Ray's autoscaler applies.

The autoscaler's config generator reads `autoscalerOptions.idleTimeoutSeconds` (as `idle_timeout_minutes`) and
each worker group's `idleTimeoutSeconds` (as the node type's `idle_timeout_s`, honoured by autoscaler v2 only).
A timeout on a cluster without `enableInTreeAutoscaling` is read by nobody. In an environment file,
`autoscaling.idleTimeoutSeconds` and a group's `idleTimeoutSeconds` are compared with the generator's config of
the rendered cluster: krc renders a group's timeout only for autoscaler v2, and neither without autoscaling.

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
from .rule import About
from .support.autoscaler_clusters import ScaledCluster, environment_cluster, scaled_clusters
from .support.context import LintContext

ABOUT = About("autoscaler/idle-timeout-ignored", "warning",
              "an idle timeout that is set is the one Ray's autoscaler config applies",
              reads_autoscaler_view=True)


def _seconds(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _spec_findings(context: LintContext, scaled: ScaledCluster) -> Iterator[Problem]:
    """Timeouts in the rendered spec of a cluster nobody autoscales."""
    cluster = scaled.view
    if cluster.autoscaling:
        return
    places = [(cluster.at("autoscalerOptions", "idleTimeoutSeconds"), cluster.autoscaler_options)]
    places += [(g.path + ("idleTimeoutSeconds",), g.spec) for g in cluster.workers]
    for path, holder in places:
        value = _seconds(holder.get("idleTimeoutSeconds"))
        if value is not None:
            yield cluster.obj.problem(f"idleTimeoutSeconds {value:g} is set but enableInTreeAutoscaling is not "
                                      "true, so no autoscaler applies it; turn autoscaling on or remove it", path)


def _environment_findings(context: LintContext, scaled: ScaledCluster) -> Iterator[Problem]:
    """Timeouts the environment file asks for, against the generator's config of what was rendered."""
    found = environment_cluster(context, scaled.view)
    if found is None:
        return
    path, item = found
    found_autoscaling = item.get("autoscaling")
    autoscaling: dict[str, Any] = found_autoscaling if isinstance(found_autoscaling, dict) else {}
    enabled = scaled.view.autoscaling
    applied = scaled.config.idle_timeout_minutes * 60
    wanted = _seconds(autoscaling.get("idleTimeoutSeconds"))
    if wanted is not None and (not enabled or abs(applied - wanted) > 1e-6):
        why = ("autoscaling is not enabled, so no autoscaler applies it" if not enabled else
               f"Ray {scaled.config.ray_version}'s autoscaler config idles workers out after {applied:g} s")
        yield context.environment_problem(
            f"autoscaling.idleTimeoutSeconds is {wanted:g} but {why}; make the rendered cluster carry it "
            "(autoscalerOptions.idleTimeoutSeconds) or remove it", (*path, "autoscaling", "idleTimeoutSeconds"))
    for group in item.get("workerGroups") or []:
        if not isinstance(group, dict):
            continue
        wanted = _seconds(group.get("idleTimeoutSeconds"))
        node = scaled.config.node_type(str(group.get("name")))
        if wanted is None or node is None:
            continue
        if enabled and scaled.view.autoscaler_v2 and node.idle_timeout_s == wanted:
            continue
        if not enabled:
            why, fix = "autoscaling is not enabled, so no autoscaler applies it", "enable autoscaling or remove it"
        else:
            own = "no idle timeout of its own" if node.idle_timeout_s is None else f"{node.idle_timeout_s:g} s"
            why = (f"Ray {scaled.config.ray_version}'s autoscaler config gives group '{node.name}' {own}, so its "
                   f"workers idle out after {applied:g} s")
            fix = "set autoscaling.version: v2 (only v2 applies per-group timeouts)"
        yield context.environment_problem(f"worker group '{group.get('name')}' sets idleTimeoutSeconds "
                                          f"{wanted:g} but {why}; {fix}",
                                          (*path, "workerGroups", str(group.get("name")), "idleTimeoutSeconds"))


def check(context: LintContext) -> Iterator[Problem]:
    for scaled in scaled_clusters(context, autoscaled_only=False):
        yield from _spec_findings(context, scaled)
        yield from _environment_findings(context, scaled)
