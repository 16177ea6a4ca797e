"""Argo CD ignores `.spec.workerGroupSpecs[].replicas` of autoscaled RayClusters it syncs.

The autoscaler writes `replicas`; an Argo CD Application that re-applies the manifest resets it on every sync
(and shows the app OutOfSync forever). Applies when the environment generates Argo CD Applications.

Fails (environment with an Application and an autoscaled RayCluster, no ignoreDifferences).

Passes:

    kind: Application
    spec:
      ignoreDifferences:
      - group: ray.io
        kind: RayCluster
        jqPathExpressions: [".spec.workerGroupSpecs[].replicas"]
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext, get_in
from .support.ray_objects import objects_of

ABOUT = About("argocd/autoscaled-replicas-ignored", "warning",
              "Argo CD ignores worker replicas of autoscaled RayClusters", environment_only=True)


def _ignores_replicas(entry: dict[str, Any], name: str, namespace: str) -> bool:
    if entry.get("kind") != "RayCluster" or entry.get("group") not in (None, "ray.io"):
        return False
    if entry.get("name") not in (None, "", name) or entry.get("namespace") not in (None, "", namespace):
        return False
    pointers = [str(p) for p in entry.get("jsonPointers") or []]
    expressions = [str(e).replace(" ", "") for e in entry.get("jqPathExpressions") or []]
    return any(p == "/spec/workerGroupSpecs" or p.startswith("/spec/workerGroupSpecs/") for p in pointers) or any(
        e.startswith(".spec.workerGroupSpecs") for e in expressions)


def check(context: LintContext) -> Iterator[Problem]:
    applications = [o for o in context.objects if o.kind == "Application" and o.api_version.startswith("argoproj.io/")]
    if not applications:
        return
    entries = [e for app in applications for e in get_in(app.document, ("spec", "ignoreDifferences"), [])
               if isinstance(e, dict)]
    for obj, spec in objects_of(context, "RayCluster"):
        if spec.get("enableInTreeAutoscaling") is not True:
            continue
        namespace = obj.namespace or str(context.environment.get("namespace") or "")
        if not any(_ignores_replicas(e, obj.name, namespace) for e in entries):
            yield obj.problem(f"RayCluster {obj.name} is autoscaled but no Argo CD Application ignores "
                              ".spec.workerGroupSpecs[].replicas, so every sync resets the autoscaler; add an "
                              "ignoreDifferences entry (group ray.io, kind RayCluster, jqPathExpressions "
                              "'.spec.workerGroupSpecs[].replicas') and RespectIgnoreDifferences=true",
                              ("spec", "enableInTreeAutoscaling"))
