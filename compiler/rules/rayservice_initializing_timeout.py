"""The annotation `ray.io/initializing-timeout` is a positive Go duration ('5m', '1h') or positive seconds.

Fails:

    kind: RayService
    metadata:
      annotations: {ray.io/initializing-timeout: "0"}

Passes:

    kind: RayService
    metadata:
      annotations: {ray.io/initializing-timeout: "10m"}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.go_formats import go_duration_seconds

ABOUT = About("rayservice/initializing-timeout", "error",
              "ray.io/initializing-timeout is a positive duration or number of seconds", versions=">=1.6")

ANNOTATION = "ray.io/initializing-timeout"


def check(context: LintContext) -> Iterator[Problem]:
    for obj in context.kuberay_objects():
        if obj.kind != "RayService":
            continue
        value = str((obj.metadata.get("annotations") or {}).get(ANNOTATION, "") or "")
        if not value:
            continue
        path = ("metadata", "annotations", ANNOTATION)
        seconds = go_duration_seconds(value)
        if seconds is None and value.lstrip("+-").isdigit():
            seconds = float(int(value))
        if seconds is None:
            yield obj.problem(f"annotation {ANNOTATION} is '{value}', neither a duration nor seconds; write e.g. "
                              "'5m' or '300'", path)
        elif seconds <= 0:
            yield obj.problem(f"annotation {ANNOTATION} is '{value}'; use a positive duration such as '5m'", path)
