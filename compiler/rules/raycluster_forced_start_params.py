"""`rayStartParams` the operator always overwrites: `block` (every group) and `no-monitor` (the autoscaled head).

Every `ray start` the operator writes has `--block` (the container must stay in the foreground), so `block:
"false"` is replaced by `"true"`. With in-tree autoscaling the head's `no-monitor` is set to `"true"` (the
autoscaler sidecar replaces Ray's monitor), so `no-monitor: "false"` there is replaced too. The written value
stays in the manifest and does nothing.

KubeRay source: `ray-operator/controllers/ray/common/pod.go`: `setMissingRayStartParams` sets
`rayStartParams["block"] = "true"` unconditionally; `DefaultHeadPodTemplate` sets `no-monitor` when
`IsAutoscalingEnabled` (1.5.2, 1.6.2, 1.7.0).

Fails:

    workerGroupSpecs:
    - groupName: cpu
      rayStartParams: {block: "false"}

Passes:

    workerGroupSpecs:
    - groupName: cpu
      rayStartParams: {num-cpus: "4"}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_groups

ABOUT = About("raycluster/forced-start-params", "warning",
              "rayStartParams block (and no-monitor on an autoscaled head) are always true")


def _is_true(value: object) -> bool:
    return str(value).strip().lower() == "true"


def check(context: LintContext) -> Iterator[Problem]:
    for cluster, group in cluster_groups(context):
        params = group.ray_start_params
        forced = [("block", "every Ray container runs ray start --block")]
        if group.is_head and cluster.autoscaling:
            forced.append(("no-monitor", "the autoscaler sidecar replaces Ray's monitor"))
        for key, why in forced:
            if key in params and not _is_true(params[key]):
                yield cluster.obj.problem(
                    f"{group.name} group sets rayStartParams {key}: {params[key]!r}, which the operator "
                    f"replaces with 'true' ({why}); remove {key} from rayStartParams",
                    group.path + ("rayStartParams", key))
