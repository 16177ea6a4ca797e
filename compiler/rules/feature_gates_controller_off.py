"""Objects the operator accepts but silently does nothing with, because a feature gate is off.

- a RayCronJob when the RayCronJob gate is off: its controller does not run, no job is ever scheduled;
- a RayService with `upgradeStrategy.type: NewClusterWithIncrementalUpgrade` when RayServiceIncrementalUpgrade
  is off: spec changes upgrade nothing.

Fails (default gates):

    kind: RayCronJob
    spec:
      schedule: "0 * * * *"

Passes: the same with `--feature-gates RayCronJob=true`.
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext, get_in
from .support.feature_gates import known_gates
from .support.ray_objects import objects_of

ABOUT = About("feature-gates/controller-off", "warning",
              "objects whose controller or upgrade path is behind a gate that is off")


def check(context: LintContext) -> Iterator[Problem]:
    gates = known_gates(context.operator_version)
    if "RayCronJob" in gates and not context.gate("RayCronJob"):
        for obj, _ in objects_of(context, "RayCronJob"):
            yield obj.problem("the RayCronJob feature gate is off, so the operator ignores this RayCronJob and "
                              "never creates its jobs; enable RayCronJob in the operator's featureGates", ("kind",))
    if not context.gate("RayServiceIncrementalUpgrade"):
        for obj, spec in objects_of(context, "RayService"):
            if get_in(spec, ("upgradeStrategy", "type")) == "NewClusterWithIncrementalUpgrade":
                yield obj.problem("upgradeStrategy NewClusterWithIncrementalUpgrade needs the "
                                  "RayServiceIncrementalUpgrade feature gate, which is off, so no upgrade will happen; "
                                  "enable the gate or use NewCluster", ("spec", "upgradeStrategy", "type"))
