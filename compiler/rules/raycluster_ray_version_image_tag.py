"""`rayVersion` matches the Ray version in the images of the Ray containers.

The operator and autoscaler choose behaviour by `rayVersion`; an image with another Ray version runs code the
operator does not expect. Images without a version tag (digests, `latest`, custom names) are not checked.

Fails:

    rayVersion: "2.52.0"
    headGroupSpec:
      template: {spec: {containers: [{name: ray-head, image: "rayproject/ray:2.46.0"}]}}

Passes:

    rayVersion: "2.52.0"
    headGroupSpec:
      template: {spec: {containers: [{name: ray-head, image: "rayproject/ray:2.52.0-py312-gpu"}]}}
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_views
from .support.versions import parse_version

ABOUT = About("raycluster/ray-version-image-tag", "warning",
              "rayVersion matches the Ray version in the Ray images' tags")

# only images that are Ray builds: rayproject/ray, rayproject/ray-ml, anyscale/ray, .../ray-llm and the like
_RAY_IMAGE = re.compile(r"(^|/)(ray|ray-ml|ray-llm)(:|@|$)")


def image_ray_version(image: str) -> tuple[Any, ...] | None:
    if "@" in image or not _RAY_IMAGE.search(image.rsplit(":", 1)[0] + ":"):
        return None
    tag = image.rsplit(":", 1)[1] if ":" in image.rsplit("/", 1)[-1] else ""
    return parse_version(tag) if re.match(r"^v?\d+\.\d+", tag) else None


# a project runs a few images in many groups
_image_version = functools.lru_cache(maxsize=1024)(image_ray_version)


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        declared = parse_version(cluster.ray_version) if cluster.ray_version else None
        if declared is None:
            continue
        for group in cluster.groups:
            image = str(group.container.get("image") or "")
            found = _image_version(image)
            if found is not None and found[:3] != declared[:3]:
                yield cluster.obj.problem(f"rayVersion is {cluster.ray_version} but the {group.name} group runs "
                                          f"image {image}; set rayVersion to the image's Ray version or change the "
                                          "image", group.container_path + ("image",))
