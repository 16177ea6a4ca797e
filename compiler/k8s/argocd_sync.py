"""How Argo CD orders a sync, and which of an environment's objects each krc plugin request deploys.

Argo CD (gitops-engine `sync_tasks.go`) applies one Application's resources by phase, then sync wave
(`argocd.argoproj.io/sync-wave`, default 0), then kind (the order below; kinds it does not list, custom resources
among them, come last), then name; a CRD in the same sync always goes before its custom resources. Across
Applications, an app-of-apps orders its children by their own waves, and waits for each wave to be healthy only
with the Application health check enabled (see deploy/argocd/README.md). `CreateNamespace=true` creates the
destination namespace before anything else of that Application.

The plugin's `crds` selection splits an environment into its foundations (the chart's CRDs and the Namespaces:
what must exist before anything else, and what deleting an application must never delete) and its workloads.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

CrdT = TypeVar("CrdT")  # what stands for a CRD in a plugin selection: its document, or the plugin's own form
SYNC_WAVE = "argocd.argoproj.io/sync-wave"
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"

# gitops-engine's kindOrder (the same as Helm's install order)
KIND_ORDER: tuple[str, ...] = (
    "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy", "PodDisruptionBudget",
    "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass", "PersistentVolume",
    "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole", "ClusterRoleList", "ClusterRoleBinding",
    "ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList", "Service", "DaemonSet", "Pod",
    "ReplicationController", "ReplicaSet", "Deployment", "HorizontalPodAutoscaler", "StatefulSet", "Job",
    "CronJob", "IngressClass", "Ingress", "APIService",
)
_KIND_RANK = {kind: rank for rank, kind in enumerate(KIND_ORDER)}
# How the plugin annotates the chart's CRDs: server-side apply (too big for the last-applied annotation), before
# everything, never pruned or deleted (deleting a CRD deletes every object of its kind)
CRD_ANNOTATIONS = {SYNC_OPTIONS: "ServerSideApply=true,Prune=false,Delete=false", SYNC_WAVE: "-10"}
# Namespaces every cluster has before any sync
BUILTIN_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})


def _annotations(document: dict[str, Any]) -> dict[str, Any]:
    annotations = (document.get("metadata") or {}).get("annotations")
    return annotations if isinstance(annotations, dict) else {}


def wave_of(document: dict[str, Any]) -> int:
    try:
        return int(str(_annotations(document).get(SYNC_WAVE, "0")).strip())
    except ValueError:
        return 0


def resource_sync_options(document: dict[str, Any]) -> set[str]:
    return {o.strip() for o in str(_annotations(document).get(SYNC_OPTIONS, "")).split(",") if o.strip()}


def kind_rank(kind: str) -> int:
    return _KIND_RANK.get(kind, len(KIND_ORDER))


def sync_key(document: dict[str, Any]) -> tuple[int, int, str]:
    """Where a resource falls in one Application's sync (phase Sync): wave, kind order, name."""
    return (wave_of(document), kind_rank(str(document.get("kind") or "")),
            str((document.get("metadata") or {}).get("name") or ""))


def is_foundation(document: dict[str, Any]) -> bool:
    """Deployed by the CRDs application (crds=only), before everything else, never pruned or deleted."""
    kind, api_version = str(document.get("kind") or ""), str(document.get("apiVersion") or "")
    return (kind, api_version.rpartition("/")[0]) in (("Namespace", ""), ("CustomResourceDefinition",
                                                                          "apiextensions.k8s.io"))


@dataclass(frozen=True)
class PluginChoice:
    """The plugin parameters that select documents (each include, exclude or only; at most one only)."""

    crds: str = "include"
    applications: str = "exclude"
    operator: str = "include"

    @classmethod
    def of(cls, parameters: Mapping[str, str]) -> PluginChoice:
        return cls(parameters.get("crds", cls.crds), parameters.get("applications", cls.applications),
                   parameters.get("operator", cls.operator))


def plugin_selection(workloads: list[dict[str, Any]], crds: list[CrdT], applications: list[dict[str, Any]],
                     operator: list[dict[str, Any]], choice: PluginChoice) -> Sequence[dict[str, Any] | CrdT]:
    """What the krc plugin emits for one request: `workloads` are the environment's non-Argo CD objects, `crds`
    the chart's CRDs (annotated), `applications` the child Applications, `operator` the operator chart's objects
    as Helm renders them (the CRDs are only placed: whatever stands for them comes back as it went in). crds=only:
    the foundations (CRDs and Namespaces); crds=exclude: neither."""
    foundations: list[dict[str, Any] | CrdT] = [d for d in workloads if is_foundation(d)]
    rest: list[dict[str, Any] | CrdT] = [d for d in workloads if not is_foundation(d)]
    if choice.crds == "only":
        return foundations + crds
    if choice.applications == "only":
        return applications
    if choice.operator == "only":
        return operator
    picked = (foundations + crds + rest) if choice.crds == "include" else rest
    return picked + (operator if choice.operator == "include" else []) \
        + (applications if choice.applications == "include" else [])
