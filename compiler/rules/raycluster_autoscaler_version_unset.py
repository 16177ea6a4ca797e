"""With autoscaling on, choose the autoscaler version explicitly (`autoscalerOptions.version: v2`).

Unset, Ray picks the version itself (v2 from Ray 2.47.0), but KubeRay treats unset as "not v2": per-group
idle timeouts and priorities are rejected and v2's restart policy is not enforced.

Fails:

    enableInTreeAutoscaling: true

Passes:

    enableInTreeAutoscaling: true
    autoscalerOptions: {version: v2}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_views

ABOUT = About("raycluster/autoscaler-version-unset", "warning",
              "autoscalerOptions.version is set when autoscaling is on")


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        if cluster.autoscaling and not cluster.autoscaler_options.get("version"):
            yield cluster.obj.problem("autoscaling is on but autoscalerOptions.version is not set, so KubeRay and "
                                      "Ray may disagree on the version; set autoscalerOptions.version: v2",
                                      cluster.at("enableInTreeAutoscaling"))
