"""What a change means for KubeRay, as labels a reviewer can scan: which changes start a new Ray cluster
(temporarily double capacity), which update Serve in place, which change Pod templates, what a deletion removes.

Every label has an impact, in plain words and ranked (IMPACTS, worst first): outage, replacement (a new cluster
or object), restart, scale, metadata only. Reports show the impact and sort by it; JSON keeps the code too.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .fielddiff import FieldChange
from .labels import Label, ranked
from .operator_changes import operator_messages
from .ray_versions import ray_version_labels
from .rayservice_action import appended_groups, cluster_action

RAY_GROUP = "ray.io"
REPLACES_CLUSTER = "rayservice-new-cluster"  # the label of a change that runs a second cluster
_HEAD_TEMPLATE = re.compile(r"(^|\.)headGroupSpec\.template(\.|\[|$)")
_WORKER_TEMPLATE = re.compile(r"(^|\.)workerGroupSpecs\[[^\]]*\]\.template(\.|\[|$)")
_WORKER_GROUP = re.compile(r"(^|\.)workerGroupSpecs\[[^\]]*\]$")

_DELETED = {
    "RayCluster": "its head and worker Pods are deleted: running jobs, actors and in-memory data are lost",
    "RayService": "its Ray clusters and Serve applications are deleted: the service goes down",
    "RayJob": "a running job stops and the cluster it created is deleted",
    "RayCronJob": "no further RayJobs are scheduled",
    "Namespace": "every object in the namespace is deleted with it",
    "CustomResourceDefinition": "every object of its kind is deleted with it",
    "ServiceAccount": "Pods that run as it can no longer be created (running Pods keep their token until restarted)",
}
# deleting these stops nothing that runs now
_DELETION_IMPACT = {"ServiceAccount": "restart"}


def _deleted_label(kind: str, document: dict[str, Any] | None) -> Label:
    if kind == "Application":
        finalizers = ((document or {}).get("metadata") or {}).get("finalizers") or []
        if "resources-finalizer.argocd.argoproj.io" in finalizers:
            return Label("deleted", "deleted: Argo CD deletes every resource this Application deployed "
                         "(resources-finalizer) before the Application itself", "outage")
        return Label("deleted", "deleted: Argo CD stops managing what this Application deployed; the resources "
                     "stay in the cluster, unmanaged (no resources-finalizer)", "metadata only")
    effect = _DELETED.get(kind, "Kubernetes deletes it and whatever it owns")
    return Label("deleted", f"deleted: {effect}", _DELETION_IMPACT.get(kind, "outage"))


def _spec(document: dict[str, Any] | None) -> dict[str, Any]:
    spec = (document or {}).get("spec")
    return spec if isinstance(spec, dict) else {}


def _upgrade_label(new: dict[str, Any]) -> Label:
    strategy = ((_spec(new).get("upgradeStrategy") or {}).get("type")) or "NewCluster"
    if strategy == "None":
        return Label("rayservice-not-upgraded", "rayClusterConfig changed but upgradeStrategy is None: KubeRay "
                     "does not roll the change out to the running cluster")
    if strategy == "NewClusterWithIncrementalUpgrade":
        return Label(REPLACES_CLUSTER, "rayClusterConfig changed: KubeRay creates a new RayCluster and "
                     "shifts traffic to it step by step (incremental upgrade, needs the RayServiceIncrementalUpgrade "
                     "gate); both clusters run meanwhile, up to double capacity")
    return Label(REPLACES_CLUSTER, "rayClusterConfig changed: KubeRay creates a new RayCluster and "
                 "switches traffic once it is ready; both run meanwhile, so the cluster's capacity is needed twice "
                 "during the upgrade")


def _rayservice_labels(old: dict[str, Any], new: dict[str, Any], fields: Sequence[FieldChange]) -> list[Label]:
    """See rayservice_action for the rule KubeRay applies to `rayClusterConfig` changes."""
    cluster = [f for f in fields if f.path.startswith("spec.rayClusterConfig")]
    old_cluster, new_cluster = _spec(old).get("rayClusterConfig"), _spec(new).get("rayClusterConfig")
    action = cluster_action(old_cluster, new_cluster) if cluster else "none"
    others = [f for f in fields if f.path.startswith("spec.") and not f.path.startswith(("spec.rayClusterConfig",
                                                                                             "spec.serveConfigV2"))]
    labels: list[Label] = []
    if action == "new-cluster":
        labels.append(_upgrade_label(new))
    elif action == "update":
        groups = ", ".join(appended_groups(old_cluster, new_cluster))
        labels.append(Label("rayservice-groups-appended", f"worker groups appended at the end ({groups}): KubeRay "
                            "updates the running RayCluster in place, no new cluster; the existing groups keep "
                            "their Pods, and the RayService's replica fields are written to the cluster with it"))
    elif cluster:
        labels.append(Label("rayservice-scale", "only worker replicas/minReplicas/maxReplicas/scaleStrategy "
                            "changed: KubeRay leaves them out of its cluster hash, so no new cluster, and it does "
                            "not update the running RayCluster either: the new values apply with the next in-place "
                            "update or new cluster"))
    if any(f.path == "spec.serveConfigV2" for f in fields) and action != "new-cluster":
        labels.append(Label("rayservice-serve-in-place", "the Serve config changed: applications are updated in "
                            "place on the running cluster, no new cluster"))
    if others and action != "new-cluster":
        labels.append(Label("rayservice-settings", "RayService settings changed: "
                            + ", ".join(sorted({f.path for f in others}))))
    return labels


def _template_labels(kind: str, new: dict[str, Any], fields: Sequence[FieldChange]) -> list[Label]:
    if kind == "RayCluster":
        recreate = ((_spec(new).get("upgradeStrategy") or {}).get("type")) == "Recreate"
        effect = ("upgradeStrategy Recreate: KubeRay recreates the cluster's Pods" if recreate else
                  "running Pods keep the old template; only Pods created later get it (set upgradeStrategy "
                  "Recreate to roll it out)")
        impact = "restart" if recreate else "metadata only"
    elif kind == "RayService":
        effect, impact = "part of the new cluster", "replacement"
    elif kind in ("RayJob", "RayCronJob"):
        effect, impact = "applies to clusters created for later runs", "metadata only"
    else:
        return []
    labels: list[Label] = []
    head = sorted({f.path for f in fields if _HEAD_TEMPLATE.search(f.path)})
    workers = sorted({f.path for f in fields if _WORKER_TEMPLATE.search(f.path)})
    if head:
        labels.append(Label("head-pod-template", f"head Pod template changed: {effect}", impact))
    if workers:
        labels.append(Label("worker-pod-template", f"worker Pod template changed: {effect}", impact))
    groups = [f for f in fields if _WORKER_GROUP.search(f.path) and f.op in ("added", "removed")]
    for change in groups:
        name = change.path.rsplit('[', 1)[1][:-1]
        labels.append(_group_label(kind, new, change.op, name))
    return labels


def _group_label(kind: str, new: dict[str, Any], op: str, name: str) -> Label:
    """A worker group added or removed. A RayService does not touch its running cluster for a removal: the
    change goes into a new cluster (its upgrade strategy decides whether and how), or nowhere with None."""
    if op == "added":
        return Label("worker-group-added", f"worker group {name} added")
    if kind != "RayService":
        return Label("worker-group-removed", f"worker group {name} removed (its Pods are deleted)")
    strategy = ((_spec(new).get("upgradeStrategy") or {}).get("type")) or "NewCluster"
    if strategy == "None":
        return Label("worker-group-removed", f"worker group {name} removed from rayClusterConfig, but "
                     "upgradeStrategy is None: the running cluster keeps the group and its Pods", "metadata only")
    return Label("worker-group-removed", f"worker group {name} removed: the new cluster is created without it, and "
                 "the old cluster, with the group's Pods, is deleted once traffic has switched", "replacement")


def object_labels(group: str, kind: str, status: str, old: dict[str, Any] | None, new: dict[str, Any] | None,
                  fields: Sequence[FieldChange]) -> tuple[Label, ...]:
    """The consequences of one object's change, most important first."""
    if status == "removed":
        return (_deleted_label(kind, old),)
    if status == "added":
        return ()
    labels: list[Label] = []
    api = [f for f in fields if f.path == "apiVersion"]
    if api:
        labels.append(Label("api-version", f"apiVersion {api[0].old} -> {api[0].new}"))
    if group == RAY_GROUP and kind == "RayService":
        labels.extend(_rayservice_labels(old or {}, new or {}, fields))
    if group == RAY_GROUP:
        labels.extend(ray_version_labels(kind, old or {}, new or {}, fields))
        labels.extend(_template_labels(kind, new or {}, fields))
    if kind == "Namespace" and any(f.path.startswith("metadata.name") for f in fields):
        labels.append(Label("namespace", "namespace changed"))
    labels.extend(Label(code, message) for code, message in operator_messages(kind, old, new, fields))
    return ranked(labels)


def values_labels(changed: bool) -> tuple[Label, ...]:
    """The operator chart's Helm values."""
    if not changed:
        return ()
    return (Label("operator-values", "operator Helm values changed: the next `helm upgrade` (or Argo CD sync) "
                  "updates the operator Deployment and restarts it"),)


