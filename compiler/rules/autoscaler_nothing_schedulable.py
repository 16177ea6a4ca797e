"""Every worker group of an autoscaled cluster offers Ray something to schedule in the autoscaler's view.

Ray's autoscaler adds workers of a node type only for demands its resources can meet. A group the generator
gives 0 CPU, no GPU and no custom resource (`num-cpus: "0"` copied from the head, a CPU-less `resources` map)
meets none, so it never scales up however much work waits, while Kubernetes would happily run its Pods.

Fails:

    enableInTreeAutoscaling: true
    workerGroupSpecs:
    - groupName: cpu
      maxReplicas: 4
      rayStartParams: {num-cpus: "0"}
      template: {spec: {containers: [{name: w, resources: {limits: {cpu: "4", memory: 8Gi}}}]}}

Passes:

    enableInTreeAutoscaling: true
    workerGroupSpecs:
    - groupName: cpu
      maxReplicas: 4
      template: {spec: {containers: [{name: w, resources: {limits: {cpu: "4", memory: 8Gi}}}]}}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.autoscaler_clusters import scaled_groups
from .support.context import LintContext

ABOUT = About("autoscaler/nothing-schedulable", "warning",
              "an autoscaled worker group offers Ray some CPU, GPU or custom resource in the generator's view",
              reads_autoscaler_view=True)


def check(context: LintContext) -> Iterator[Problem]:
    for scaled, node, group in scaled_groups(context):
        if node.max_workers == 0:
            continue
        if node.amount("CPU") > 0 or node.amount("GPU") > 0 or any(v > 0 for v in node.custom.values()):
            continue
        params = group.ray_start_params
        path = group.path + (("rayStartParams", "num-cpus") if "num-cpus" in params else ())
        yield scaled.view.obj.problem(
            f"worker group '{node.name}' offers Ray no CPU, GPU or custom resource in Ray "
            f"{scaled.config.ray_version}'s autoscaler config, so no demand ever scales it up; give it CPUs "
            "(num-cpus or the container's CPU limit), a GPU or a custom resource, or remove the group", path)
