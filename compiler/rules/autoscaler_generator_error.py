"""Ray's autoscaler can read every autoscaled cluster: its own config generator does not fail on the spec.

The in-tree autoscaler builds its config from the RayCluster with Ray's KubeRay autoscaling-config generator
(the generator of the environment's `ray.version`, run by krc); where the generator raises, the autoscaler
container fails at start and the cluster never scales. Typical causes: a worker group whose Ray container has no
CPU limit or request and no `num-cpus`, no `workerGroupSpecs` at all, a malformed `resources` rayStartParam.

Fails:

    enableInTreeAutoscaling: true
    workerGroupSpecs:
    - groupName: cpu
      maxReplicas: 2
      template: {spec: {containers: [{name: ray-worker, image: rayproject/ray:2.58.0}]}}

Passes:

    enableInTreeAutoscaling: true
    workerGroupSpecs:
    - groupName: cpu
      maxReplicas: 2
      rayStartParams: {num-cpus: "1"}
      template: {spec: {containers: [{name: ray-worker, image: rayproject/ray:2.58.0}]}}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.autoscaler_clusters import scaled_clusters
from .support.context import LintContext

ABOUT = About("autoscaler/generator-error", "error",
              "Ray's autoscaling-config generator reads every autoscaled cluster without failing",
              reads_autoscaler_view=True)


def check(context: LintContext) -> Iterator[Problem]:
    for scaled in scaled_clusters(context):
        if scaled.config.error:
            yield scaled.view.obj.problem(
                f"Ray {scaled.config.ray_version}'s autoscaler cannot build its config from this cluster "
                f"({scaled.config.error}); fix the cluster spec, or the autoscaler fails at start and nothing "
                "scales", scaled.view.path)
