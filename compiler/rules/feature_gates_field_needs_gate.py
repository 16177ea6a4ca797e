"""Fields the operator rejects unless their feature gate is on.

| field | gate |
| --- | --- |
| `gcsFaultToleranceOptions.backend: rocksdb` | GCSFaultToleranceEmbeddedStorage |
| `historyServerOptions` | RayClusterHistoryServer |
| `networkPolicy` | RayClusterNetworkPolicy |
| `tlsOptions` (even `enabled: false`) | RayClusterMTLS |
| RayJob `deletionStrategy`, worker group `suspend: true` | RayJobDeletionPolicy |

Fails (with the default gates of 1.7.0):

    kind: RayCluster
    spec:
      networkPolicy: {mode: DenyAll}

Passes: the same with `--feature-gates RayClusterNetworkPolicy=true` (or `featureGates` in the environment).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext, LintObject, get_in
from .support.feature_gates import known_gates
from .support.ray_objects import cluster_views, job_views

ABOUT = About("feature-gates/field-needs-gate", "error",
              "fields behind a feature gate are used only when the gate is on")


def _off(context: LintContext, obj: LintObject, gate: str, what: str, path: tuple[Any, ...]) -> Iterator[Problem]:
    # a gate the version does not know means the field is not in its CRD either: schema validation reports it
    if gate in known_gates(context.operator_version) and not context.gate(gate):
        yield obj.problem(f"{what} needs the {gate} feature gate, which is off, so the operator rejects this "
                          f"object; enable {gate} in the operator's featureGates or remove the field", path)


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        obj = cluster.obj
        if get_in(cluster.spec, ("gcsFaultToleranceOptions", "backend")) == "rocksdb":
            yield from _off(context, obj, "GCSFaultToleranceEmbeddedStorage", "the rocksdb GCS backend",
                            cluster.at("gcsFaultToleranceOptions", "backend"))
        for field, gate in (("historyServerOptions", "RayClusterHistoryServer"),
                            ("networkPolicy", "RayClusterNetworkPolicy"), ("tlsOptions", "RayClusterMTLS")):
            if cluster.spec.get(field) is not None:
                yield from _off(context, obj, gate, field, cluster.at(field))
        for group in cluster.workers:
            if group.spec.get("suspend") is True:
                yield from _off(context, obj, "RayJobDeletionPolicy", f"suspending worker group '{group.name}'",
                                group.path + ("suspend",))
    for job in job_views(context):
        if job.spec.get("deletionStrategy") is not None:
            yield from _off(context, job.obj, "RayJobDeletionPolicy", "deletionStrategy", job.at("deletionStrategy"))
