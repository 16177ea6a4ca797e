"""Where no idle timeout is set, say which one Ray's autoscaler applies.

Without `autoscalerOptions.idleTimeoutSeconds` the autoscaler's config generator sets `idle_timeout_minutes` to
1.0: idle workers are removed after 60 s, and scale-up starts from cold again (image pull, Ray start) the next
time. Worker groups with their own `idleTimeoutSeconds` under autoscaler v2 are not affected.

Fails (info):

    enableInTreeAutoscaling: true
    workerGroupSpecs:
    - {groupName: cpu, maxReplicas: 4, ...}

Passes:

    enableInTreeAutoscaling: true
    autoscalerOptions: {idleTimeoutSeconds: 600}
    workerGroupSpecs:
    - {groupName: cpu, maxReplicas: 4, ...}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.autoscaler_clusters import scaled_clusters
from .support.context import LintContext

ABOUT = About("autoscaler/idle-timeout-default", "info", "the idle timeout Ray's autoscaler applies when none is set",
              reads_autoscaler_view=True)


def check(context: LintContext) -> Iterator[Problem]:
    for scaled in scaled_clusters(context):
        cluster, config = scaled.view, scaled.config
        if config.error or cluster.autoscaler_options.get("idleTimeoutSeconds") is not None:
            continue
        defaulted = [n.name for n in config.workers
                     if n.max_workers > 0 and (n.idle_timeout_s is None or not cluster.autoscaler_v2)]
        if not defaulted:
            continue
        seconds = config.idle_timeout_minutes * 60
        yield cluster.obj.problem(
            f"no idle timeout is set: Ray {config.ray_version}'s autoscaler removes idle workers of "
            f"{', '.join(repr(n) for n in defaulted)} after {seconds:g} s (idle_timeout_minutes "
            f"{config.idle_timeout_minutes:g}, its default); set autoscalerOptions.idleTimeoutSeconds to choose",
            cluster.path)
