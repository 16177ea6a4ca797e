"""A worker group's `replicas` outside [minReplicas, maxReplicas] is moved into the range by the operator.

The operator never creates `replicas` Pods when that number lies outside the bounds: above `maxReplicas` it runs
`maxReplicas`, below `minReplicas` it runs `minReplicas`, and nothing says so. The field keeps the written
number, so the manifest (and a review of it) shows a size the cluster never has.

KubeRay source: `ray-operator/controllers/ray/utils/util.go`, `GetWorkerGroupDesiredReplicas` (1.5.2, 1.6.2,
1.7.0; called by `raycluster_controller.go` `reconcilePods` for every worker group). In 1.5.2 a minReplicas above
maxReplicas also yields maxReplicas (1.6 rejects that pair: `raycluster/worker-replicas`). A suspended group
(`suspend: true`) runs 0 whatever is written. `replicas: 0` is not reported: it is the CRD's default, so a
manifest that never wrote it cannot be told apart.

Fails:

    workerGroupSpecs:
    - groupName: cpu
      replicas: 5        # runs 3
      maxReplicas: 3

Passes:

    workerGroupSpecs:
    - groupName: cpu
      replicas: 3
      maxReplicas: 3
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_groups, defaulted_int

ABOUT = About("raycluster/replicas-clamped", "warning",
              "worker replicas outside [minReplicas, maxReplicas] are clamped by the operator")


def check(context: LintContext) -> Iterator[Problem]:
    for cluster, group in cluster_groups(context, workers_only=True):
        replicas = defaulted_int(group.spec.get("replicas"))
        low, high = group.replica_bounds
        if replicas is None or replicas == 0 or group.spec.get("suspend") is True:
            continue
        where = group.path + ("replicas",)
        if high is not None and replicas > high:
            yield cluster.obj.problem(
                f"worker group '{group.name}' has replicas {replicas} above maxReplicas {high}: the operator "
                f"runs {high}; set replicas to {high} or less, or raise maxReplicas to {replicas}", where)
        elif low is not None and replicas < low and (high is None or low <= high):
            yield cluster.obj.problem(
                f"worker group '{group.name}' has replicas {replicas} below minReplicas {low}: the operator "
                f"runs {low}; set replicas to {low} or more, or lower minReplicas to {replicas}", where)
