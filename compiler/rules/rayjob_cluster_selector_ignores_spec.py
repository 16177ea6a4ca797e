"""A RayJob with a `clusterSelector` runs on the selected cluster: its `rayClusterSpec` is never used.

With a non-empty `clusterSelector` the operator takes the cluster named by `ray.io/cluster` and never creates one
from `rayClusterSpec`; the spec is accepted and ignored (no Pods, no head Service, no clean-up of it). Whoever
reads the manifest sees a cluster that does not exist.

KubeRay source: `ray-operator/controllers/ray/rayjob_controller.go`: `initRayJobStatusIfNeed` takes the cluster
name from `clusterSelector[ray.io/cluster]`, `getOrCreateRayClusterInstance` creates a cluster only when no
selector is set, `reconcileServices` returns early with one (1.5.2, 1.6.2, 1.7.0).
`utils/validation.go` `ValidateRayJobSpec` accepts both fields together.

Fails:

    kind: RayJob
    spec:
      clusterSelector: {ray.io/cluster: shared}
      rayClusterSpec: {headGroupSpec: ...}     # ignored

Passes:

    kind: RayJob
    spec:
      clusterSelector: {ray.io/cluster: shared}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import job_views

ABOUT = About("rayjob/cluster-selector-ignores-spec", "warning",
              "a RayJob with clusterSelector ignores its rayClusterSpec")


def check(context: LintContext) -> Iterator[Problem]:
    for job in job_views(context):
        if job.cluster_selector and job.cluster is not None:
            name = job.cluster_selector.get("ray.io/cluster") or "the selected cluster"
            yield job.obj.problem(
                f"the job has both clusterSelector and rayClusterSpec: the operator runs it on {name} and never "
                "creates the cluster written under rayClusterSpec; remove rayClusterSpec, or remove "
                "clusterSelector to create that cluster", job.at("rayClusterSpec"))
