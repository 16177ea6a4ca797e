"""A RayCluster's `upgradeStrategy.type` is Recreate or None, and only standalone clusters may set it.

Clusters created by a RayJob or a RayService are replaced by their owner, so the operator rejects an
`upgradeStrategy` in `rayClusterSpec` / `rayClusterConfig` (or on a cluster labelled
`ray.io/originated-from-crd: RayJob|RayService`).

Fails:

    kind: RayJob
    spec:
      rayClusterSpec:
        upgradeStrategy: {type: Recreate}

Passes:

    kind: RayCluster
    spec:
      upgradeStrategy: {type: Recreate}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext, get_in
from .support.ray_objects import cluster_views

ABOUT = About("raycluster/upgrade-strategy", "error",
              "RayCluster upgradeStrategy is Recreate or None and only on standalone clusters", versions=">=1.6")

VALID = ("Recreate", "None")


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        kind = get_in(cluster.spec, ("upgradeStrategy", "type"))
        if kind is None:
            continue
        path = cluster.at("upgradeStrategy", "type")
        owner = cluster.owner
        if owner == "RayCluster":
            owner = str(get_in(cluster.obj.metadata, ("labels", "ray.io/originated-from-crd"), "RayCluster"))
        if owner == "RayCronJob":
            owner = "RayJob"
        if owner in ("RayJob", "RayService"):
            yield cluster.obj.problem(f"upgradeStrategy is set on a cluster that a {owner} creates; remove it "
                                      f"(the {owner} replaces its cluster itself)", path)
        elif kind not in VALID:
            yield cluster.obj.problem(f"upgradeStrategy.type '{kind}' is not valid for a RayCluster; use Recreate or "
                                      "None", path)
