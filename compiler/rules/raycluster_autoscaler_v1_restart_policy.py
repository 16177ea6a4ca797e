"""With autoscaler v1 chosen explicitly, worker pods should not restart in place.

The operator only warns (an event) when `autoscalerOptions.version: v1` is combined with a worker
`restartPolicy` other than Never or unset: the autoscaler and the kubelet then both replace failed workers.

Fails:

    enableInTreeAutoscaling: true
    autoscalerOptions: {version: v1}
    workerGroupSpecs:
    - groupName: cpu
      template: {spec: {restartPolicy: Always, containers: [{name: ray-worker}]}}

Passes:

    enableInTreeAutoscaling: true
    autoscalerOptions: {version: v1}
    workerGroupSpecs:
    - groupName: cpu
      template: {spec: {restartPolicy: Never, containers: [{name: ray-worker}]}}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_views

ABOUT = About("raycluster/autoscaler-v1-restart-policy", "warning",
              "with autoscaler v1, worker restartPolicy is Never or unset")


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        if not cluster.autoscaling or cluster.autoscaler_options.get("version") != "v1":
            continue
        for group in cluster.workers:
            policy = group.template_spec.get("restartPolicy")
            if policy not in (None, "", "Never"):
                yield cluster.obj.problem(f"worker group '{group.name}' has restartPolicy {policy} with autoscaler "
                                          "v1; set restartPolicy: Never so only the autoscaler replaces workers",
                                          group.path + ("template", "spec", "restartPolicy"))
