"""A RayService upgrade strategy is valid, and an incremental upgrade has what it needs.

`upgradeStrategy.type` is None, NewCluster or NewClusterWithIncrementalUpgrade (the CRD has no enum).
NewClusterWithIncrementalUpgrade shifts traffic through the Gateway API and needs autoscaling on and
`clusterUpgradeOptions` with a `gatewayClassName`, `intervalSeconds` > 0, and
0 <= `stepSizePercent` <= `maxSurgePercent` <= 100 (the step <= surge check from 1.7).
`rayClusterDeletionDelaySeconds` is non-negative.

The operator checks the incremental-upgrade prerequisites only when the RayServiceIncrementalUpgrade gate is
on (IsIncrementalUpgradeEnabled); with the gate off it silently upgrades nothing, which
feature-gates/controller-off reports, so this rule stays quiet about the options then.

Fails:

    upgradeStrategy:
      type: NewClusterWithIncrementalUpgrade
      clusterUpgradeOptions: {gatewayClassName: istio, stepSizePercent: 50, maxSurgePercent: 10, intervalSeconds: 30}

Passes:

    upgradeStrategy:
      type: NewClusterWithIncrementalUpgrade
      clusterUpgradeOptions: {gatewayClassName: istio, stepSizePercent: 10, maxSurgePercent: 10, intervalSeconds: 30}
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext, LintObject, get_in
from .support.ray_objects import int_or, objects_of
from .support.versions import applies_to

ABOUT = About("rayservice/upgrade-strategy", "error",
              "upgradeStrategy type is valid and incremental upgrades have their prerequisites")

TYPES = ("None", "NewCluster", "NewClusterWithIncrementalUpgrade")


def _incremental(context: LintContext, obj: LintObject, spec: dict[str, Any]) -> Iterator[Problem]:
    base = ("spec", "upgradeStrategy")
    if get_in(spec, ("rayClusterConfig", "enableInTreeAutoscaling")) is not True:
        yield obj.problem("NewClusterWithIncrementalUpgrade needs the Ray autoscaler; set "
                          "rayClusterConfig.enableInTreeAutoscaling: true", base + ("type",))
    options = get_in(spec, ("upgradeStrategy", "clusterUpgradeOptions"))
    if not isinstance(options, dict):
        yield obj.problem("NewClusterWithIncrementalUpgrade needs upgradeStrategy.clusterUpgradeOptions "
                          "(gatewayClassName, stepSizePercent, intervalSeconds); add them", base)
        return
    path = base + ("clusterUpgradeOptions",)
    surge = int_or(options.get("maxSurgePercent"), 100)
    step = options.get("stepSizePercent")
    if not 0 <= surge <= 100:
        yield obj.problem(f"maxSurgePercent is {surge}; use 0 to 100", path + ("maxSurgePercent",))
    if step is None or not 0 <= int_or(step, -1) <= 100:
        yield obj.problem("stepSizePercent must be set between 0 and 100; set the share of traffic moved per step",
                          path + ("stepSizePercent",))
    elif int_or(step, 0) > surge and applies_to(">=1.7", context.operator_version):
        yield obj.problem(f"stepSizePercent {step} is larger than maxSurgePercent {surge}; lower the step or raise "
                          "the surge", path + ("stepSizePercent",))
    if int_or(options.get("intervalSeconds"), 0) <= 0:
        yield obj.problem("intervalSeconds must be greater than 0; set the seconds between traffic steps",
                          path + ("intervalSeconds",))
    if not options.get("gatewayClassName"):
        yield obj.problem("gatewayClassName is required for incremental upgrades; name the GatewayClass your "
                          "cluster installs (for example istio)", path)


def check(context: LintContext) -> Iterator[Problem]:
    for obj, spec in objects_of(context, "RayService"):
        delay = spec.get("rayClusterDeletionDelaySeconds")
        if delay is not None and int_or(delay, 0) < 0:
            yield obj.problem(f"rayClusterDeletionDelaySeconds is {delay}; use 0 or more",
                              ("spec", "rayClusterDeletionDelaySeconds"))
        kind = get_in(spec, ("upgradeStrategy", "type"))
        if kind is None:
            continue
        if kind not in TYPES:
            yield obj.problem(f"upgradeStrategy.type '{kind}' is not valid; use NewCluster, "
                              "NewClusterWithIncrementalUpgrade or None", ("spec", "upgradeStrategy", "type"))
        elif kind == "NewClusterWithIncrementalUpgrade" and context.gate("RayServiceIncrementalUpgrade"):
            yield from _incremental(context, obj, spec)
