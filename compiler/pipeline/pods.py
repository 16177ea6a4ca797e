"""`krc show ENV --pods`: the Pods and Services KubeRay's controllers create for the environment's custom
resources, from KubeRay's own builders at the version the environment pins (compiler/native/kuberay.py).

The builders get what the operator gets: each object as the API server stores it (CRD defaults applied, unknown
fields pruned: the engine's validation of the pinned chart's CRDs) and the operator as the chart configures it
(its Deployment's feature gates and environment).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..k8s.objects import object_ref
from ..native import kuberay
from ..project.paths import Project
from ..render.templates import Render
from ..validation import SchemaSet
from .environments import compile_environments

KUBERAY_KINDS = frozenset({"RayCluster", "RayJob", "RayService", "RayCronJob"})


@dataclass(frozen=True)
class ObjectPods:
    """What KubeRay makes of one custom resource: its refusals, why nothing is made (skipped), its clusters."""

    source: str  # Kind/namespace/name of the custom resource
    kuberay_version: str
    refusals: tuple[dict[str, Any], ...]
    skipped: str
    clusters: tuple[dict[str, Any], ...]
    # krc's warnings on the object (the operator ignoring, clamping or overriding what was written), shown
    # beside the Pods that carry the result
    overrides: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"object": self.source, "kuberayVersion": self.kuberay_version, "refusals": list(self.refusals),
                "skipped": self.skipped or None, "clusters": list(self.clusters), "overrides": list(self.overrides)}


def _tidy(document: Any) -> Any:
    """A Go object as a manifest: without the empty status and the null creationTimestamp Go's encoder writes."""
    if isinstance(document, dict):
        return {k: _tidy(v) for k, v in document.items()
                if not (k == "status" and not v) and not (k == "creationTimestamp" and v is None)}
    if isinstance(document, list):
        return [_tidy(v) for v in document]
    return document


def _tidied(cluster: dict[str, Any]) -> dict[str, Any]:
    pods = [{**group, "pod": _tidy(group["pod"])} for group in cluster.get("pods") or []]
    # KubeRay's Service builders leave the type out (the client fills it in when it creates them)
    services = [{"apiVersion": "v1", "kind": "Service", **_tidy(s)} for s in cluster.get("services") or []]
    return {"name": cluster["name"], "pods": pods, "services": services}


def render_pods(render: Render) -> list[ObjectPods]:
    """Every KubeRay custom resource of one render, through KubeRay's builders of its pinned version."""
    documents = [o.document for o in render.objects if o.document.get("kind") in KUBERAY_KINDS
                 and str(o.document.get("apiVersion", "")).startswith("ray.io/")]
    if not documents:
        return []
    version = render.chart.version
    where = render.environment.location_of(("operator", "chart", "version"))
    kuberay.require_build(version, where)  # before any validation work: the message is the answer
    schemas = SchemaSet.from_crds(render.chart.crds)
    results = schemas.validate_many(documents, [None] * len(documents))
    defaulted = [r.defaulted if isinstance(r.defaulted, dict) else d for r, d in zip(results, documents, strict=True)]
    operator = kuberay.operator_config([o.document for o in render.chart_objects])
    answers = kuberay.build(version, operator, defaulted, where)
    found = []
    for document, answer in zip(documents, answers, strict=True):
        skipped = str(answer.get("skipped") or answer.get("error") or "")
        source = object_ref(document)
        overrides = tuple(f"{p.message} [{p.rule}]" for p in render.findings
                          if p.object == source and p.severity == "warning")
        found.append(ObjectPods(source, version, tuple(answer.get("refusals") or ()), skipped,
                                tuple(_tidied(c) for c in answer.get("clusters") or ()), overrides))
    return found


def environment_pods(project: Project, name: str) -> list[ObjectPods]:
    """`krc show ENV --pods`: the environment rendered (validated and linted as by render), then its Pods."""
    [render] = compile_environments(project, project.select([name]))
    return render_pods(render)


def pods_yaml_documents(found: list[ObjectPods]) -> list[tuple[list[str], dict[str, Any]]]:
    """(comment lines, manifest) for each Pod and Service, in order: the comment names the object that causes
    it, its group and how many of it run; above an object's first Pod, krc's warnings about what the operator
    does differently from what was written."""
    shown: list[tuple[list[str], dict[str, Any]]] = []
    for item in found:
        marks = [f"krc: warning: {text}" for text in item.overrides]
        for cluster in item.clusters:
            for group in cluster["pods"]:
                count = (f"{group['min']} at min, {group['max']} at max, {group['desired']} created first"
                         if group["type"] == "worker" else "1")
                shown.append(([f"{item.source} -> RayCluster {cluster['name']}: {group['type']} group "
                               f"'{group['group']}', Pods: {count} (KubeRay {item.kuberay_version})", *marks],
                              group["pod"]))
                marks = []  # once per object, above its first Pod
            for service in cluster["services"]:
                name = (service.get("metadata") or {}).get("name")
                shown.append(([f"{item.source} -> RayCluster {cluster['name']}: Service {name} "
                               f"(KubeRay {item.kuberay_version})"], service))
    return shown


def pods_notes(found: list[ObjectPods]) -> list[str]:
    """What made no Pods: KubeRay's refusals and the objects its controllers leave alone."""
    notes = []
    for item in found:
        for refusal in item.refusals:
            where = f" at {refusal['field']}" if refusal.get("field") else ""
            by = "its admission webhook (not installed by the chart)" if refusal.get("webhook") else refusal["by"]
            notes.append(f"{item.source}: KubeRay {item.kuberay_version} refuses it{where} ({by}): "
                         f"{refusal['message']}")
        if item.skipped:
            notes.append(f"{item.source}: no Pods: {item.skipped}")
    return notes
