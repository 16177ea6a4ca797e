"""What KubeRay and Ray do when the Ray version or the Ray image of a running cluster changes.

Ray needs the same Ray (and Python) version on the head and every worker: a worker started from another version
fails its version check against the GCS and never joins. KubeRay does not roll a RayCluster's Pod template out by
itself: unless `spec.upgradeStrategy.type` is `Recreate` (KubeRay >= 1.6) the running head and workers keep the
old image, and only Pods created later (autoscaler scale-up, a replaced Pod) get the new one: with a new Ray
version they cannot join the old head. A RayService instead builds a whole new cluster (NewCluster,
NewClusterWithIncrementalUpgrade) and switches traffic once it is ready, which is the safe way; with
`upgradeStrategy: None` nothing is rolled out. A RayJob or RayCronJob creates a cluster per run: later runs get
the new version, a running one keeps its cluster.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .fielddiff import FieldChange
from .labels import Label

_IMAGE = re.compile(r"(^|\.)(headGroupSpec|workerGroupSpecs\[[^\]]*\])\.template\.spec\.(init)?[cC]ontainers\[[^\]]*\]"
                    r"\.image$")
_TAG_VERSION = re.compile(r"^v?(\d+\.\d+(?:\.\d+)?)")


def image_ray_version(image: Any) -> str:
    """The Ray version in an image tag (`rayproject/ray:2.58.0-py312` -> 2.58.0); "" when the tag has none."""
    text = str(image or "")
    if "@" in text or ":" not in text.rsplit("/", 1)[-1]:
        return ""
    found = _TAG_VERSION.match(text.rsplit(":", 1)[1])
    return found[1] if found else ""


def _what_changed(fields: Sequence[FieldChange]) -> tuple[str, str] | None:
    """('version', 'Ray 2.58.0 -> 2.59.0') or ('image', 'image a -> b'); None when neither changed."""
    for change in fields:
        if change.path.endswith("rayVersion") and change.op == "changed":
            return "version", f"Ray {change.old} -> {change.new}"
    images = [c for c in fields if c.op == "changed" and _IMAGE.search(c.path)]
    for change in images:
        old, new = image_ray_version(change.old), image_ray_version(change.new)
        if old and new and old != new:
            return "version", f"Ray {old} -> {new} (image {change.old} -> {change.new})"
    if images:
        return "image", f"image {images[0].old} -> {images[0].new}"
    return None


def _strategy(document: dict[str, Any], *path: str) -> str:
    node: Any = document
    for step in path:
        node = node.get(step) if isinstance(node, dict) else None
    return str(node.get("type")) if isinstance(node, dict) and node.get("type") else ""


def ray_version_labels(kind: str, old: dict[str, Any], new: dict[str, Any],
                       fields: Sequence[FieldChange]) -> list[Label]:
    """The label for a Ray version or image change of a KubeRay object; [] when neither changed."""
    changed = _what_changed(fields)
    if changed is None or kind not in ("RayCluster", "RayService"):
        return []
    what, words = changed
    mismatch = ("new workers run another Ray version than the head and fail to join it (Ray requires the same "
                "version on every node)" if what == "version" else
                "new workers may run other Ray or Python packages than the head; Ray requires the same Ray and "
                "Python versions on every node")
    if kind == "RayCluster":
        if _strategy(new, "spec", "upgradeStrategy") == "Recreate":
            return [Label(f"ray-{what}-recreate", f"{words}: upgradeStrategy Recreate: KubeRay deletes and "
                          "recreates every Pod of the cluster at once, so head and workers move together; running "
                          "jobs, actors and objects in memory are lost", "restart")]
        return [Label(f"ray-{what}-running-cluster", f"{words} on a running RayCluster: KubeRay leaves the running "
                      f"head and workers as they are; Pods created later (scale-up, a replaced Pod) get the new "
                      f"image, and {mismatch}. Instead: set spec.upgradeStrategy.type Recreate (KubeRay >= 1.6) to "
                      "restart the whole cluster at once, or delete and recreate the RayCluster in a maintenance "
                      "window, or serve through a RayService, which builds a new cluster and switches over",
                      "outage")]
    strategy = _strategy(new, "spec", "upgradeStrategy") or "NewCluster"
    if strategy == "None":
        return [Label(f"ray-{what}-not-rolled-out", f"{words}: upgradeStrategy None: KubeRay does not touch the "
                      "running cluster, so the service keeps the old version. Instead: set upgradeStrategy "
                      "NewCluster to build a cluster with the new version and switch traffic to it", "metadata only")]
    return [Label(f"ray-{what}-new-cluster", f"{words}: KubeRay builds a new cluster with it ({strategy}) and "
                  "switches traffic once it is ready, so head and workers never mix versions; the old cluster is "
                  "deleted afterwards", "replacement")]
