"""Autoscaler settings the operator rejects.

- `RAY_enable_autoscaler_v2` set to 1/true in the head env while `enableInTreeAutoscaling` is off;
- a suspended worker group while autoscaling is on;
- both `autoscalerOptions.version` and the head env `RAY_enable_autoscaler_v2` (use only the former);
- with autoscaler v2, a head or worker `restartPolicy` other than Never (or unset);
- `KUBERAY_GEN_AUTOSCALER_START_CMD` in `autoscalerOptions.env` (KubeRay injects it; 1.7.0 and later).

Fails:

    enableInTreeAutoscaling: true
    autoscalerOptions: {version: v2}
    headGroupSpec:
      template:
        spec:
          restartPolicy: Always

Passes:

    enableInTreeAutoscaling: true
    autoscalerOptions: {version: v2}
    headGroupSpec:
      template:
        spec:
          restartPolicy: Never
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_views, env_by_name
from .support.versions import applies_to

ABOUT = About("raycluster/autoscaler", "error",
              "autoscaler version, suspension, restart policies and env are consistent")

V2_SWITCH = "RAY_enable_autoscaler_v2"
START_CMD = "KUBERAY_GEN_AUTOSCALER_START_CMD"


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        obj, head = cluster.obj, cluster.head
        switch = head.env.get(V2_SWITCH)
        switch_path = head.container_path + ("env", head.env_index(V2_SWITCH))
        options = cluster.autoscaler_options
        if not cluster.autoscaling:
            if switch is not None and str(switch.get("value")) in ("1", "true"):
                yield obj.problem(f"the head env {V2_SWITCH} is '{switch.get('value')}' but enableInTreeAutoscaling "
                                  "is not true; set enableInTreeAutoscaling: true or remove the variable", switch_path)
            continue
        for group in cluster.workers:
            if group.spec.get("suspend") is True:
                yield obj.problem(f"worker group '{group.name}' is suspended while the autoscaler is on; remove "
                                  "suspend or turn autoscaling off", group.path + ("suspend",))
        if options.get("version") and switch is not None:
            yield obj.problem(f"both autoscalerOptions.version and the head env {V2_SWITCH} are set; remove the "
                              "env variable", switch_path)
        if options.get("version") == "v2":
            for group in cluster.groups:
                policy = group.template_spec.get("restartPolicy")
                if policy not in (None, "", "Never"):
                    what = "the head pod" if group.is_head else f"worker group '{group.name}'"
                    yield obj.problem(f"{what} has restartPolicy {policy}, but autoscaler v2 needs Never or unset; "
                                      "set restartPolicy: Never", group.path + ("template", "spec", "restartPolicy"))
        if applies_to(">=1.7", context.operator_version) and START_CMD in env_by_name(options.get("env")):
            yield obj.problem(f"autoscalerOptions.env sets {START_CMD}, which KubeRay injects itself; remove it "
                              "(reference it from autoscalerOptions.args instead)",
                              cluster.at("autoscalerOptions", "env"))
