"""What KubeRay does to a RayService's running cluster when `spec.rayClusterConfig` changes.

The RayService controller keeps a hash of the cluster spec on the RayCluster it created, computed with every
worker group's `replicas`, `minReplicas`, `maxReplicas` and `scaleStrategy` (workersToDelete) left out
(`generateHashWithoutReplicasAndWorkersToDelete`; min/max since KubeRay 1.2, PR #2172, so in every chart version
krc renders, 1.5.2 to 1.7.0). Comparing it with the desired spec (`isClusterSpecHashEqual`,
`shouldUpdateCluster`, `shouldPrepareNewCluster`):

1. equal hashes: nothing happens. A change of only those scale fields creates no new cluster, and it does not
   update the running RayCluster either (intended upstream: the autoscaler owns the running cluster's replicas;
   kuberay#2331, #4568). The new values reach the cluster with its next in-place update or replacement.
2. the desired spec has more worker groups, and the hash of its first N groups (N = the running cluster's count)
   equals the running one: the new groups were appended at the end, so KubeRay updates the running RayCluster
   in place (whatever the upgrade strategy), and the whole desired spec, scale fields included, is written to it.
3. anything else (a changed template, a group inserted before others, removed or reordered, head changes...):
   a new cluster, as the upgrade strategy says (NewCluster, NewClusterWithIncrementalUpgrade, or None: no
   upgrade at all).

Here the old side is the golden object, standing for what the running cluster was created from.
"""
from __future__ import annotations

from typing import Any, Literal

ClusterAction = Literal["none", "update", "new-cluster"]
# left out of KubeRay's cluster hash, per worker group
SCALE_FIELDS = ("replicas", "minReplicas", "maxReplicas", "scaleStrategy")


def _groups(spec: dict[str, Any]) -> list[Any]:
    groups = spec.get("workerGroupSpecs")
    return groups if isinstance(groups, list) else []


def hashed_part(spec: Any, group_count: int | None = None) -> Any:
    """The cluster spec as KubeRay hashes it: scale fields dropped, optionally only the first `group_count`
    worker groups. An empty group list equals none (Go omits the empty slice from the JSON it hashes)."""
    if not isinstance(spec, dict):
        return spec
    groups = _groups(spec)[:group_count] if group_count is not None else _groups(spec)
    out = {key: value for key, value in spec.items() if key != "workerGroupSpecs"}
    if groups:
        out["workerGroupSpecs"] = [{k: v for k, v in g.items() if k not in SCALE_FIELDS} if isinstance(g, dict)
                                   else g for g in groups]
    return out


def cluster_action(old_spec: Any, new_spec: Any) -> ClusterAction:
    """What KubeRay does when a RayService's cluster spec goes from `old_spec` to `new_spec`."""
    if hashed_part(old_spec) == hashed_part(new_spec):
        return "none"
    if isinstance(old_spec, dict) and isinstance(new_spec, dict):
        count = len(_groups(old_spec))
        if len(_groups(new_spec)) > count and hashed_part(old_spec) == hashed_part(new_spec, count):
            return "update"
    return "new-cluster"


def appended_groups(old_spec: Any, new_spec: Any) -> list[str]:
    """The names of the worker groups `new_spec` has beyond `old_spec`'s count (the appended ones)."""
    if not isinstance(old_spec, dict) or not isinstance(new_spec, dict):
        return []
    extra = _groups(new_spec)[len(_groups(old_spec)):]
    return [str(g.get("groupName", "?")) if isinstance(g, dict) else "?" for g in extra]
