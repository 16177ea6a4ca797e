"""Pod labels `ray.io/cluster`, `ray.io/node-type` and `ray.io/group` are the operator's: it drops the user's.

The operator selects a cluster's Pods by these three labels and writes them itself (cluster name, `head` or
`worker`, group name). A value written in a group's Pod template labels, or in the group's `labels` field, is
skipped without a word: a Service, NetworkPolicy or monitoring rule selecting on the written value matches
nothing.

KubeRay source: `ray-operator/controllers/ray/common/pod.go`, `labelPod` ("The following labels are not
overridable"), called from `DefaultHeadPodTemplate` and `DefaultWorkerPodTemplate` with the template labels
merged with the group's `labels` (`mergeLabels`). Same in 1.5.2, 1.6.2 and
1.7.0. `RayNodeHeadGroupLabelValue` is `headgroup`.

Fails:

    workerGroupSpecs:
    - groupName: cpu
      template:
        metadata: {labels: {ray.io/group: batch}}   # the Pods carry ray.io/group: cpu

Passes:

    workerGroupSpecs:
    - groupName: cpu
      template:
        metadata: {labels: {team: batch}}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext, get_in
from .support.ray_objects import cluster_views

ABOUT = About("raycluster/reserved-pod-labels", "warning",
              "Pod labels ray.io/cluster, ray.io/node-type and ray.io/group are set by the operator, never by the user")

RESERVED = ("ray.io/cluster", "ray.io/group", "ray.io/node-type")


def _operator_value(key: str, cluster_name: str, group: str, is_head: bool) -> str:
    if key == "ray.io/cluster":
        return cluster_name or "the cluster's name"
    if key == "ray.io/node-type":
        return "head" if is_head else "worker"
    return "headgroup" if is_head else group


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        # a RayJob's or RayService's cluster is named by the operator; a RayCluster's by its metadata
        cluster_name = cluster.obj.name if cluster.owner == "RayCluster" else ""
        for group in cluster.groups:
            metadata = get_in(group.spec, ("template", "metadata"))
            sources = [(metadata.get("labels") if isinstance(metadata, dict) else None,
                        ("template", "metadata", "labels")),
                       (group.spec.get("labels"), ("labels",))]
            for labels, at in sources:
                if not isinstance(labels, dict):
                    continue
                for key in RESERVED:
                    if key in labels:
                        ours = _operator_value(key, cluster_name, group.name, group.is_head)
                        yield cluster.obj.problem(
                            f"{group.name} group sets Pod label {key}: {labels[key]}, which the operator drops "
                            f"and writes as {key}: {ours}; remove {key} from the labels (use a label key of "
                            "your own to select these Pods)", group.path + at + (key,))
