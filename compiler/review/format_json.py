"""`krc diff --format json`: the review for tools. Stable: keys sorted, lists in a fixed order, 2-space indent.

Shape (version 1; fields are only ever added):

    {
      "format": "krc-diff/1",
      "base": "golden/ at origin/main (0123456789ab)",   # what golden was read from
      "ref": "origin/main",                               # --base, or null for the working tree
      "changed": true,                                    # exit status 1
      "crdGatesUnapproved": ["prod-eks-gpu"],             # gates with blocking reasons and no valid approval
      "removedEnvironments": ["staging"],                 # environment file gone, golden/ (at base) still has it
      "checkErrors": 1,                                   # error-level checks over every environment
      "environments": [{
        "name": "prod-eks-gpu",
        "changed": true,
        "removed": false,                                 # true: every object below is pruned (status removed)
        "firstRender": false,                             # golden had nothing for it
        "checks": [{"severity": "error", "rule": "policy/prod-gpu-limit", "file": "policies/x.cue", "line": 29,
                    "column": 41, "message": "...", "object": "", "path": "totalGpus"}],   # errors first
        "limits": [{"policy": "policy/prod-gpu-limit", "resource": "gpu", "limit": 32, "value": 39, "ok": false}],
        "groups": [{"field": "image", "old": "a", "new": "b", "objects": 4, "occurrences": 12, "unit": "containers",
                    "places": [{"ref": "RayCluster ray-prod/x", "path": "spec...image"}]}],  # same change twice+
        "counts": {"added": 1, "removed": 0, "changed": 2, "unchanged": 7},
        "capacity": {                                     # at max scale; see review/capacity.py
          "before": {"cpu": "285", "cpuMillis": 285000, "gpu": 23, "memory": "1148Gi", "memoryBytes": ...},
          "after": {...},
          "upgradePeak": {...} | null,                    # while replaced RayService clusters run twice
          "rayView": null | {                             # after, as Ray's autoscaler sees it (review/ray_view.py)
            "rayVersion": "2.58.0", "ray": {"cpu", "gpu", "memory", "memoryBytes", "custom"} | null,
            "rayBefore": {...} | null,                    # golden's, through the same generator
            "kubernetes": {...}, "reasons": ["... headgroup: CPU: Ray 0 from rayStartParams num-cpus '0', ..."],
            "failed": [], "unavailable": null | "the autoscaler config generator of Ray X is not installed; ..."}
        },
        "crdGate": null | {                               # present when the CRDs differ from the golden lock
          "chart": "kuberay-operator", "oldVersion": "1.6.2", "newVersion": "1.7.0",
          "statements": ["CRD upgrade: ...", "`helm upgrade` installs ..."],   # the plain-words warning
          "crds": [{"name", "kind", "status": "added|removed|changed|unchanged", "oldSha256", "newSha256"}],
          "oldCrds": {"status": "compared" | "unavailable",  # could the old chart's CRDs be read?
                      "reason": null | "the old CRDs (kuberay-operator 1.6.2) are unavailable; run krc vendor ..."},
          "counts": {"breaking": 17, "warning": 3, "info": 61} | null,      # null: not compared (unavailable)
          "breaking": [{"crd", "version", "path", "check", "severity", "message", "old", "new"}] | null,  # same
          "breakingGroups": [{"check", "field", "message", "count", "places": ["<crd> <version> <path>"]}] | null,
          "notes": ["..."],                               # what could not be compared
          "goldenUnderNewCrds": [{"object", "path", "rule", "severity", "message", "pruned"}],
          "renderedUnderOldCrds": [{... same, "pruned": true when the API server drops the field}] | null,
                                                          # null: not checked (old CRDs unavailable); never
                                                          # read null as "no changes" or "all valid"
          "crdApplication": "krc-prod-eks-gpu-crds",      # "" when no Argo CD CRD application is rendered
          "blocking": ["17 breaking CRD changes"],        # why an approval is needed; [] when it is not
                                                          # (breaking changes, removed CRDs, invalid golden
                                                          # objects, fields the old CRDs prune, incomplete)
          "approval": {"status": "not-required|approved|missing|mismatch", "file", "problems": [], "template"}
        },
        "objects": [{                                     # sorted by group, kind, namespace, name
          "id": {"group": "ray.io", "kind": "RayService", "namespace": "ray-prod", "name": "summarizer"},
          "ref": "RayService ray-prod/summarizer",
          "status": "added|removed|changed",
          "apiVersion": {"old": "ray.io/v1alpha1" | null, "new": "ray.io/v1" | null},
          "file": "manifests/rayservice-summarizer.yaml",
          "labels": [{"code": "rayservice-new-cluster", "impact": "replacement", "message": "..."}],  # worst first
          "summary": "RayJob ray-prod/x: 16 CPU, 2 GPU, 64Gi memory at max; deadline 4h" | "",  # added/removed
          "fields": [                                     # changed objects; document order
            {"path": "spec.x", "op": "changed", "old": 1, "new": 2},
            {"path": "spec.y", "op": "added", "new": {...}},
            {"path": "spec.z", "op": "removed", "old": "..."},
            {"path": "spec.serveConfigV2", "op": "text", "diff": ["@@ -1,3 +1,3 @@", " a", "-b", "+c"]},
            {"path": "spec.list", "op": "reordered", "old": ["a", "b"], "new": ["b", "a"]}
          ],
          "object": {...} | null                          # the whole object when added (new) or removed (old)
        }],
        "files": [{"path": "helm/kuberay-operator.values.yaml", "status": "changed", "diff": [...], "labels": [...]}]
      }]
    }

Objects are sorted by their worst impact first. Impacts, worst first: outage, replacement, restart, scale,
metadata only. Label codes: deleted, api-version, ray-version-running-cluster, ray-image-running-cluster,
ray-version-recreate, ray-image-recreate, ray-version-new-cluster, ray-image-new-cluster,
ray-version-not-rolled-out, ray-image-not-rolled-out,
rayservice-new-cluster (the only one that runs a second cluster, so the only
one counted in upgradePeak), rayservice-not-upgraded, rayservice-groups-appended (worker groups appended at the
end: the running cluster is updated in place), rayservice-serve-in-place, rayservice-scale (only
replicas/minReplicas/maxReplicas: no new cluster), rayservice-settings, head-pod-template, worker-pod-template,
worker-group-added, worker-group-removed, namespace, operator-values.
"""
from __future__ import annotations

import json
from typing import Any

from ..diagnostics.problems import Problem, safe_json
from .crdgate import CrdGate, gate_statements
from .grouping import group_crd_changes
from .model import EnvironmentReview, ObjectChange, Review

FORMAT_VERSION = "krc-diff/1"


def gate_dict(gate: CrdGate) -> dict[str, Any]:
    return {
        "chart": gate.chart, "oldVersion": gate.old_version, "newVersion": gate.new_version,
        "statements": gate_statements(gate),
        "crds": [c.as_dict() for c in gate.crds],
        "oldCrds": {"status": "compared" if gate.compared else "unavailable", "reason": gate.unavailable or None},
        "counts": gate.counts if gate.compared else None,
        "breaking": [c.as_dict() for c in gate.changes if c.severity == "breaking"] if gate.compared else None,
        "breakingGroups": [g.as_dict() for g in group_crd_changes(c for c in gate.changes if c.severity == "breaking")]
        if gate.compared else None,
        "notes": list(gate.notes),
        "goldenUnderNewCrds": [f.as_dict() for f in gate.golden_under_new],
        "renderedUnderOldCrds": [f.as_dict() for f in gate.rendered_under_old] if gate.compared else None,
        "crdApplication": gate.crd_application,
        "blocking": list(gate.blocking),
        "approval": gate.approval.as_dict(),
    }


def object_dict(obj: ObjectChange) -> dict[str, Any]:
    return {
        "id": obj.key.as_dict(), "ref": obj.key.ref, "status": obj.status,
        "apiVersion": {"old": obj.old_api_version or None, "new": obj.new_api_version or None},
        "file": obj.file,
        "labels": [label.as_dict() for label in obj.labels],
        "fields": [f.as_dict() for f in obj.fields],
        "object": obj.document,
        "summary": obj.summary,
    }


def check_dict(problem: Problem) -> dict[str, Any]:
    where = problem.location
    return {"severity": problem.severity, "rule": problem.rule, "file": where.file if where else None,
            "line": where.line if where else None, "column": where.column if where else None,
            "message": problem.message, "object": problem.object, "path": problem.path}


def environment_dict(env: EnvironmentReview) -> dict[str, Any]:
    return {
        "name": env.name, "changed": env.changed, "removed": env.removed, "firstRender": env.first_render,
        "checks": [check_dict(p) for p in env.checks], "limits": [lim.as_dict() for lim in env.limits],
        "syncOrder": [{"wave": a.wave, "application": a.name, "syncs": a.syncs} for a in env.sync],
        "gpusByAccelerator": [{"accelerator": g.accelerator, "before": g.before, "after": g.after}
                              for g in env.accelerators],
        "newChecks": [check_dict(p) for p in env.new_checks],
        "resolvedChecks": [check_dict(p) for p in env.resolved_checks],
        "groups": [g.as_dict() for g in env.groups],
        "counts": {"added": env.count("added"), "removed": env.count("removed"), "changed": env.count("changed"),
                   "unchanged": env.unchanged},
        "capacity": {"before": env.capacity_before.as_dict(), "after": env.capacity_after.as_dict(),
                     "upgradePeak": env.upgrade_peak.as_dict() if env.upgrade_peak else None,
                     "rayView": env.ray_view.as_dict() if env.ray_view else None},
        "crdGate": gate_dict(env.gate) if env.gate else None,
        "objects": [object_dict(o) for o in env.objects],
        "files": [{"path": f.path, "status": f.status, "diff": list(f.diff),
                   "labels": [label.as_dict() for label in f.labels]} for f in env.files],
    }


def review_dict(review: Review) -> dict[str, Any]:
    return {
        "format": FORMAT_VERSION, "base": review.base, "ref": review.ref, "changed": review.changed,
        "crdGatesUnapproved": [g.environment for g in review.unapproved],
        "removedEnvironments": list(review.removed),
        "checkErrors": sum(e.check_errors for e in review.environments),
        "checksBase": review.checks_base or None, "checksNote": review.checks_note or None,
        "newCheckErrors": sum(e.new_errors for e in review.environments),
        "environments": [environment_dict(e) for e in review.environments],
    }


def format_json(review: Review) -> str:
    """Non-ASCII text as it is; control and bidirectional characters as \\u escapes (problems.safe_json)."""
    return safe_json(json.dumps(review_dict(review), indent=2, sort_keys=True, ensure_ascii=False, default=str)
                     + "\n")
