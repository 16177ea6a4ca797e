"""Environment variables the operator always appends to the Ray container replace the user's of the same name.

The operator appends its own definitions of a few variables to the Ray container (the first container) of every
Pod it creates, without looking for the user's: with two definitions of one name Kubernetes keeps the last, the
operator's. A value written for one of them is dropped silently.

KubeRay source: `ray-operator/controllers/ray/common/pod.go`, `setContainerEnvVars` (called from `BuildPod`):
appended unconditionally are `RAY_CLUSTER_NAME`, `RAY_CLOUD_INSTANCE_ID`, `RAY_NODE_TYPE_NAME` and
`KUBERAY_GEN_RAY_START_CMD` (1.5.2, 1.6.2, 1.7.0), `RAY_CLUSTER_NAMESPACE` (1.6.2, 1.7.0), `FQ_RAY_IP` and
`RAY_IP` on workers, `RAY_USAGE_STATS_EXTRA_TAGS` on the head. Variables it adds only when missing (`RAY_PORT`,
`RAY_ADDRESS`, ...) are the user's to set and not reported.

Fails:

    workerGroupSpecs:
    - groupName: cpu
      template:
        spec:
          containers: [{name: ray-worker, env: [{name: RAY_CLUSTER_NAME, value: other}]}]

Passes:

    workerGroupSpecs:
    - groupName: cpu
      template:
        spec:
          containers: [{name: ray-worker, env: [{name: RAY_PORT, value: "6380"}]}]
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_groups
from .support.versions import applies_to

ABOUT = About("raycluster/operator-env-vars", "warning",
              "env vars the operator always appends (RAY_CLUSTER_NAME, RAY_IP, ...) override the user's")

EVERY_NODE = ("KUBERAY_GEN_RAY_START_CMD", "RAY_CLOUD_INSTANCE_ID", "RAY_CLUSTER_NAME", "RAY_NODE_TYPE_NAME")
WORKER_ONLY = ("FQ_RAY_IP", "RAY_IP")
HEAD_ONLY = ("RAY_USAGE_STATS_EXTRA_TAGS",)


def managed(operator_version: str, is_head: bool) -> frozenset[str]:
    """The names the operator appends unconditionally to this node type's Ray container."""
    names = {*EVERY_NODE, *(HEAD_ONLY if is_head else WORKER_ONLY)}
    if applies_to(">=1.6", operator_version):
        names.add("RAY_CLUSTER_NAMESPACE")
    return frozenset(names)


def check(context: LintContext) -> Iterator[Problem]:
    for cluster, group in cluster_groups(context):
        names = managed(context.operator_version, group.is_head)
        for index, entry in enumerate(group.container.get("env") or []):
            name = entry.get("name") if isinstance(entry, dict) else None
            if name in names:
                yield cluster.obj.problem(
                    f"{group.name} group sets env {name}, which the operator appends again with its own value "
                    f"(Kubernetes keeps the last definition); remove {name} from env",
                    group.container_path + ("env", index))
