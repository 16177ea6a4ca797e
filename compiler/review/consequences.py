"""What a change means for KubeRay, as labels a reviewer can scan: which changes start a new Ray cluster
(temporarily double capacity), which update Serve in place, which change Pod templates, what a deletion removes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .fielddiff import FieldChange

RAY_GROUP = "ray.io"
# RayService and RayCluster (Recreate) compare a hash of the cluster spec without these: scaling is in place
_SCALE_ONLY = re.compile(r"\.workerGroupSpecs\[[^\]]*\]\.(replicas|scaleStrategy)(\.|\[|$)")
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
}


@dataclass(frozen=True)
class Label:
    code: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


def _spec(document: dict | None) -> dict:
    spec = (document or {}).get("spec")
    return spec if isinstance(spec, dict) else {}


def _rayservice_labels(new: dict, fields: Sequence[FieldChange]) -> list[Label]:
    cluster = [f for f in fields if f.path.startswith("spec.rayClusterConfig")]
    rebuilds = [f for f in cluster if not _SCALE_ONLY.search(f.path)]
    others = [f for f in fields if f.path.startswith("spec.") and not f.path.startswith(("spec.rayClusterConfig",
                                                                                             "spec.serveConfigV2"))]
    labels: list[Label] = []
    if rebuilds:
        strategy = ((_spec(new).get("upgradeStrategy") or {}).get("type")) or "NewCluster"
        if strategy == "None":
            labels.append(Label("rayservice-not-upgraded", "rayClusterConfig changed but upgradeStrategy is None: "
                                "KubeRay does not roll the change out to the running cluster"))
        elif strategy == "NewClusterWithIncrementalUpgrade":
            labels.append(Label("rayservice-new-cluster", "rayClusterConfig changed: KubeRay creates a new "
                                "RayCluster and shifts traffic to it step by step (incremental upgrade, needs the "
                                "RayServiceIncrementalUpgrade gate); both clusters run meanwhile, up to double "
                                "capacity"))
        else:
            labels.append(Label("rayservice-new-cluster", "rayClusterConfig changed: KubeRay creates a new "
                                "RayCluster and switches traffic once it is ready; both run meanwhile, so the "
                                "cluster's capacity is needed twice during the upgrade"))
    if any(f.path == "spec.serveConfigV2" for f in fields) and not rebuilds:
        labels.append(Label("rayservice-serve-in-place", "only the Serve config changed: applications are updated "
                            "in place on the running cluster, no new cluster"))
    elif not rebuilds and cluster:
        labels.append(Label("rayservice-scale", "only worker replicas changed: applied to the running cluster"))
    if others and not rebuilds:
        labels.append(Label("rayservice-settings", "RayService settings changed: "
                            + ", ".join(sorted({f.path for f in others}))))
    return labels


def _template_labels(kind: str, new: dict, fields: Sequence[FieldChange]) -> list[Label]:
    if kind == "RayCluster":
        recreate = ((_spec(new).get("upgradeStrategy") or {}).get("type")) == "Recreate"
        effect = ("upgradeStrategy Recreate: KubeRay recreates the cluster's Pods" if recreate else
                  "running Pods keep the old template; only Pods created later get it (set upgradeStrategy "
                  "Recreate to roll it out)")
    elif kind == "RayService":
        effect = "part of the new cluster"
    elif kind in ("RayJob", "RayCronJob"):
        effect = "applies to clusters created for later runs"
    else:
        return []
    labels: list[Label] = []
    head = sorted({f.path for f in fields if _HEAD_TEMPLATE.search(f.path)})
    workers = sorted({f.path for f in fields if _WORKER_TEMPLATE.search(f.path)})
    if head:
        labels.append(Label("head-pod-template", f"head Pod template changed: {effect}"))
    if workers:
        labels.append(Label("worker-pod-template", f"worker Pod template changed: {effect}"))
    groups = [f for f in fields if _WORKER_GROUP.search(f.path) and f.op in ("added", "removed")]
    for change in groups:
        verb = "added" if change.op == "added" else "removed (its Pods are deleted)"
        labels.append(Label(f"worker-group-{change.op}", f"worker group {change.path.rsplit('[', 1)[1][:-1]} {verb}"))
    return labels


def object_labels(group: str, kind: str, status: str, old: dict | None, new: dict | None,
                  fields: Sequence[FieldChange]) -> tuple[Label, ...]:
    """The consequences of one object's change, most important first."""
    if status == "removed":
        effect = _DELETED.get(kind, "Kubernetes deletes it and whatever it owns")
        return (Label("deleted", f"deleted: {effect}"),)
    if status == "added":
        return ()
    labels: list[Label] = []
    api = [f for f in fields if f.path == "apiVersion"]
    if api:
        labels.append(Label("api-version", f"apiVersion {api[0].old} -> {api[0].new}"))
    if group == RAY_GROUP and kind == "RayService":
        labels.extend(_rayservice_labels(new or {}, fields))
    if group == RAY_GROUP:
        labels.extend(_template_labels(kind, new or {}, fields))
    if kind == "Namespace" and any(f.path.startswith("metadata.name") for f in fields):
        labels.append(Label("namespace", "namespace changed"))
    return tuple(labels)


def values_labels(changed: bool) -> tuple[Label, ...]:
    """The operator chart's Helm values."""
    if not changed:
        return ()
    return (Label("operator-values", "operator Helm values changed: the next `helm upgrade` (or Argo CD sync) "
                  "updates the operator Deployment and restarts it"),)


