"""A RayService names its head Service itself: `headService.metadata.name` must stay unset.

Fails:

    kind: RayService
    spec:
      rayClusterConfig:
        headGroupSpec:
          headService: {metadata: {name: my-head}}

Passes:

    kind: RayService
    spec:
      rayClusterConfig:
        headGroupSpec:
          headService: {metadata: {labels: {team: a}}}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext, get_in
from .support.ray_objects import objects_of

ABOUT = About("rayservice/head-service-name", "error", "a RayService's headService has no metadata.name")

PATH = ("spec", "rayClusterConfig", "headGroupSpec", "headService", "metadata", "name")


def check(context: LintContext) -> Iterator[Problem]:
    for obj, _ in objects_of(context, "RayService"):
        if get_in(obj.document, PATH):
            yield obj.problem("rayClusterConfig.headGroupSpec.headService.metadata.name is set, but a RayService "
                              "names its head Service itself; remove the name", PATH)
