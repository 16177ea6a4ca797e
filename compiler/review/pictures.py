"""What the review draws: the Argo CD sync order and the GPUs at maximum scale per accelerator.

Both are read from the render (the objects `krc golden` would write): Argo CD syncs Applications wave by wave,
lowest first (`argocd.argoproj.io/sync-wave`, 0 when unset), and a wave starts once the one before is healthy; the
GPUs of a worker group count at maxReplicas x numOfHosts, under the accelerator its Pods are placed on (the node
label its nodeSelector names: Karpenter's `karpenter.k8s.aws/instance-gpu-name`, GKE's accelerator, NVIDIA's
product label), the head's too. The reports draw them (review/diagrams.py): Mermaid in the markdown, SVG in HTML.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..k8s.ray_cluster_specs import cluster_specs
from ..k8s.shapes import field, mapping, sequence
from .capacity import pod_capacity

SYNC_WAVE = "argocd.argoproj.io/sync-wave"
ROLE_LABEL = "krc.dev/argocd-role"  # what krc made the Application for (templates/objects/argocd.jsonnet)
ACCELERATOR_LABELS = ("karpenter.k8s.aws/instance-gpu-name", "cloud.google.com/gke-accelerator",
                      "nvidia.com/gpu.product", "node.kubernetes.io/instance-type")
UNLABELLED = "any GPU node"


@dataclass(frozen=True)
class SyncApp:
    wave: int
    name: str
    syncs: str  # what it deploys: its source path or chart, as Argo CD names it


@dataclass(frozen=True)
class AcceleratorGpus:
    accelerator: str
    before: int
    after: int


def _wave(document: dict[str, Any]) -> int:
    value = mapping(field(document, "metadata").get("annotations")).get(SYNC_WAVE, "0")
    try:
        return int(str(value).strip())
    except ValueError:
        return 0


def _source(document: dict[str, Any]) -> str:
    """What the Application deploys, in a few words: krc's role for it (crds, operator, workloads), else its
    chart or path; and where to."""
    spec = field(document, "spec")
    role = mapping(field(document, "metadata").get("labels")).get(ROLE_LABEL)
    sources = [mapping(s) for s in sequence(spec.get("sources"))] or [mapping(spec.get("source"))]
    words = [str(role)] if role else []
    for source in sources if not role else ():
        if source.get("chart"):
            words.append(f"chart {source['chart']} {source.get('targetRevision', '')}".strip())
        elif source.get("path") and source["path"] != ".":
            words.append(str(source["path"]))
    namespace = field(spec, "destination").get("namespace")
    return ", ".join(words) + (f" into {namespace}" if namespace else "")


def sync_order(documents: Iterable[dict[str, Any]]) -> tuple[SyncApp, ...]:
    """The Argo CD Applications, in the order Argo CD syncs them (wave, then name)."""
    apps = [SyncApp(_wave(d), str(field(d, "metadata").get("name", "")), _source(d)) for d in documents
            if isinstance(d, dict) and d.get("kind") == "Application" and str(d.get("apiVersion", "")).startswith(
                "argoproj.io/")]
    return tuple(sorted(apps, key=lambda app: (app.wave, app.name)))


def _accelerator(template: Any) -> str:
    selector = mapping(field(template, "spec").get("nodeSelector"))
    for label in ACCELERATOR_LABELS:
        if selector.get(label):
            return str(selector[label])
    return UNLABELLED


def gpus_by_accelerator(documents: Iterable[dict[str, Any]]) -> dict[str, int]:
    """GPUs at maximum scale per accelerator, over every Ray cluster the objects define."""
    found: dict[str, int] = {}
    for document in documents:
        for _, spec in cluster_specs(document):
            head = field(spec, "headGroupSpec").get("template")
            places = [(head, 1)]
            for group in sequence(spec.get("workerGroupSpecs")):
                group = mapping(group)
                replicas = group.get("maxReplicas", group.get("replicas", 1))
                hosts = group.get("numOfHosts") or 1
                count = (replicas if isinstance(replicas, int) else 0) * (hosts if isinstance(hosts, int) else 1)
                places.append((group.get("template"), count))
            for template, count in places:
                gpus = pod_capacity(template).gpus * count
                if gpus:
                    name = _accelerator(template)
                    found[name] = found.get(name, 0) + gpus
    return found


def accelerator_change(before: Iterable[dict[str, Any]], after: Iterable[dict[str, Any]]
                       ) -> tuple[AcceleratorGpus, ...]:
    old, new = gpus_by_accelerator(before), gpus_by_accelerator(after)
    return tuple(AcceleratorGpus(name, old.get(name, 0), new.get(name, 0)) for name in sorted(old.keys() | new.keys()))
