"""A group's Pod template `metadata.name` and `metadata.namespace` are replaced by the operator.

Pods are created in the RayCluster's namespace (so a user's rights stay within it) and named by the operator: a
worker template's `name` is cleared for a generated name, the head's is overwritten. A namespace or name written
in the template is dropped without a word.

KubeRay source: `ray-operator/controllers/ray/common/pod.go`: `DefaultHeadPodTemplate` sets `GenerateName` (or
`Name` with deterministic head names) and `ObjectMeta.Namespace = instance.Namespace`; `DefaultWorkerPodTemplate`
sets `GenerateName`, `ObjectMeta.Namespace = instance.Namespace` and `ObjectMeta.Name = ""` (1.5.2, 1.6.2,
1.7.0).

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

from ..problems import Problem
from .support.context import LintContext, get_in
from .support.ray_objects import cluster_views

ID = "raycluster/pod-template-identity"
SEVERITY = "warning"
SUMMARY = "the Pod template's metadata name and namespace are replaced by the operator"
VERSIONS = ""
ENVIRONMENT_ONLY = False


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        for group in cluster.groups:
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
            for key in ("name", "generateName"):
                if metadata.get(key):
                    yield cluster.obj.problem(
                        f"{group.name} group's Pod template sets {key} {metadata[key]}, which the operator replaces "
                        f"with a name of its own; remove {key} from the template", at + (key,))
