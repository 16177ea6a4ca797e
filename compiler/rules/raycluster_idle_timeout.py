"""Idle timeouts are non-negative, and a per-group idleTimeoutSeconds needs autoscaler v2.

`autoscalerOptions.idleTimeoutSeconds` works with both autoscaler versions; a worker group's own
`idleTimeoutSeconds` is only honoured by v2, which must be chosen explicitly (`autoscalerOptions.version: v2`,
or the head env `RAY_enable_autoscaler_v2` for operators older than 1.4).

Fails:

    enableInTreeAutoscaling: true
    workerGroupSpecs:
    - groupName: cpu
      idleTimeoutSeconds: 120

Passes:

    enableInTreeAutoscaling: true
    autoscalerOptions: {version: v2}
    workerGroupSpecs:
    - groupName: cpu
      idleTimeoutSeconds: 120
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_views, int_or

ABOUT = About("raycluster/idle-timeout", "error",
              "idle timeouts are non-negative; per-group idleTimeoutSeconds needs autoscaler v2", versions=">=1.6")


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        for group in cluster.workers:
            if "idleTimeoutSeconds" not in group.spec or group.spec["idleTimeoutSeconds"] is None:
                continue
            path = group.path + ("idleTimeoutSeconds",)
            value = int_or(group.spec["idleTimeoutSeconds"], 0)
            if value < 0:
                yield cluster.obj.problem(f"worker group '{group.name}' has idleTimeoutSeconds {value}; use 0 or "
                                          "more", path)
            elif not cluster.autoscaler_v2:
                yield cluster.obj.problem(f"worker group '{group.name}' sets idleTimeoutSeconds, which only "
                                          "autoscaler v2 honours; set autoscalerOptions.version: v2", path)
        option = cluster.autoscaler_options.get("idleTimeoutSeconds")
        if option is not None and int_or(option, 0) < 0:
            yield cluster.obj.problem(f"autoscalerOptions.idleTimeoutSeconds is {option}; use 0 or more",
                                      cluster.at("autoscalerOptions", "idleTimeoutSeconds"))
