"""An environment declared CPU-only (`cpuOnly: true`) requests no GPU anywhere.

Such Pods never schedule (there are no GPU nodes), or Ray waits forever for GPU resources.

Fails (environment with cpuOnly: true):

    workerGroupSpecs:
    - groupName: gpu
      rayStartParams: {num-gpus: "1"}

Passes:

    workerGroupSpecs:
    - groupName: cpu
      rayStartParams: {}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_groups, job_views
from .support.ray_resources import gpu_limit, ray_resources

ABOUT = About("resources/gpu-in-cpu-only-environment", "error",
              "no GPU requests in an environment declared CPU-only", environment_only=True)


def check(context: LintContext) -> Iterator[Problem]:
    if not context.cpu_only:
        return
    for cluster, group in cluster_groups(context):
        ray_gpu = ray_resources(group).gpu or 0
        if gpu_limit(group) > 0 or ray_gpu > 0:
            yield cluster.obj.problem(f"{group.name} group asks for GPUs in environment "
                                      f"'{context.environment_name}', which is declared CPU-only; remove the GPU "
                                      "request or deploy it to a GPU environment", group.container_path)
    for job in job_views(context):
        gpus = job.spec.get("entrypointNumGpus")
        if isinstance(gpus, (int, float)) and gpus > 0:
            yield job.obj.problem("entrypointNumGpus asks for GPUs in an environment declared CPU-only; set it to 0",
                                  job.at("entrypointNumGpus"))
