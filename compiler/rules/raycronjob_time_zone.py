"""A RayCronJob `timeZone` is a known IANA zone name (the operator embeds the tz database).

Fails:

    kind: RayCronJob
    spec:
      timeZone: Asia/Taipie

Passes:

    kind: RayCronJob
    spec:
      timeZone: Asia/Taipei
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.go_formats import go_location_known
from .support.ray_objects import objects_of

ABOUT = About("raycronjob/time-zone", "error", "timeZone is a non-empty IANA time zone name", versions=">=1.7")


def check(context: LintContext) -> Iterator[Problem]:
    for obj, spec in objects_of(context, "RayCronJob"):
        zone = spec.get("timeZone")
        path = ("spec", "timeZone")
        if zone is None:
            continue
        if zone == "":
            yield obj.problem("timeZone is empty; remove it to use the operator's local zone, or name a zone such as "
                              "Europe/Berlin", path)
        elif not isinstance(zone, str) or not go_location_known(zone):
            yield obj.problem(f"timeZone '{zone}' is not a known IANA time zone; use a name such as Asia/Taipei or "
                              "UTC", path)
