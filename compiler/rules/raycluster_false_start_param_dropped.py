"""A `rayStartParams` value "false" is dropped: the flag never reaches `ray start`, so Ray's default applies.

The operator turns `"true"` into a bare `--flag` and leaves `"false"` out entirely (except for the flags it
knows take an explicit boolean). For a flag whose default is true, or one that takes a value, `"false"` does not
do what it says.

KubeRay source: `ray-operator/controllers/ray/common/pod.go`, `convertParamMap`: flags kept as `--flag=false` are
`log-color` and `include-dashboard` in 1.5.2 and 1.6.2, plus `include-log-monitor` in 1.7.0.

Fails:

    headGroupSpec:
      rayStartParams: {include-log-monitor: "false"}   # with operator 1.6.2

Passes:

    headGroupSpec:
      rayStartParams: {include-dashboard: "false"}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_groups
from .support.versions import applies_to

ABOUT = About("raycluster/false-start-param-dropped", "warning",
              "a rayStartParams value 'false' is left out of ray start (Ray's default applies)")


def kept_false(operator_version: str) -> frozenset[str]:
    """The flags the operator writes as --flag=false, by version."""
    if applies_to(">=1.7", operator_version):
        return frozenset({"log-color", "include-dashboard", "include-log-monitor"})
    return frozenset({"log-color", "include-dashboard"})


def check(context: LintContext) -> Iterator[Problem]:
    kept = kept_false(context.operator_version)
    for cluster, group in cluster_groups(context):
        for key, value in sorted(group.ray_start_params.items()):
            # block, and no-monitor on an autoscaled head, are forced to true (raycluster/forced-start-params)
            forced = key == "block" or (key == "no-monitor" and group.is_head and cluster.autoscaling)
            if key in kept or forced or str(value).strip().lower() != "false":
                continue
            yield cluster.obj.problem(
                f"{group.name} group sets rayStartParams {key}: {value!r}, which the operator leaves out of "
                f"ray start, so Ray's default for --{key} applies; remove {key} (operator "
                f"{context.operator_version} passes 'false' only for {', '.join(sorted(kept))})",
                group.path + ("rayStartParams", key))
