"""A group's Pod template `metadata.namespace`, and a worker template's `name`, are replaced by the operator.

Pods are created in the RayCluster's namespace (so a user's rights stay within it), and worker Pods are named by
the operator: a worker template's `name` is cleared for a generated name (`<cluster>-<group>-worker-<random>`).
What was written there is dropped without a word. The head template's `name` is kept (the API server then
ignores the generated name), unless the operator runs with `ENABLE_DETERMINISTIC_HEAD_POD_NAME=true`, which
replaces it: it is not reported. (`generateName` is not in the CRD's template metadata: the API server prunes it,
`schema/unknown-field`.)

KubeRay source: `ray-operator/controllers/ray/common/pod.go`: `DefaultHeadPodTemplate` sets `GenerateName` (or,
with `utils.IsDeterministicHeadPodNameEnabled`, `Name`) and `ObjectMeta.Namespace = instance.Namespace`;
`DefaultWorkerPodTemplate` sets `GenerateName`, `ObjectMeta.Namespace = instance.Namespace` and
`ObjectMeta.Name = ""`; the names come from `utils.PodName` (`raycluster_controller.go` `createHeadPod`,
`createWorkerPod`); 1.5.2, 1.6.2, 1.7.0.

Fails:

    workerGroupSpecs:
    - groupName: cpu
      template:
        metadata: {namespace: other}

Passes:

    workerGroupSpecs:
    - groupName: cpu
      template:
        metadata: {labels: {team: a}}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext, get_in
from .support.ray_objects import cluster_groups

ABOUT = About("raycluster/pod-template-identity", "warning",
              "the Pod template's namespace and a worker template's name are replaced by the operator")


def check(context: LintContext) -> Iterator[Problem]:
    for cluster, group in cluster_groups(context):
        metadata = get_in(group.spec, ("template", "metadata"), {})
        if not isinstance(metadata, dict):
            continue
        at = group.path + ("template", "metadata")
        namespace = metadata.get("namespace")
        if namespace and namespace != cluster.obj.namespace:
            yield cluster.obj.problem(
                f"{group.name} group's Pod template sets namespace {namespace}: the operator creates the Pods "
                f"in the cluster's own namespace instead; remove namespace from the template (move the "
                "cluster to that namespace to run there)", at + ("namespace",))
        # the head keeps a written name (see above)
        if not group.is_head and metadata.get("name"):
            yield cluster.obj.problem(
                f"{group.name} group's Pod template sets name {metadata['name']}, which the operator replaces "
                "with a generated name for each worker; remove name from the template", at + ("name",))
