"""A RayCronJob schedule is a standard 5-field cron expression or a descriptor, without a time zone.

The operator parses it with robfig/cron's standard parser: five fields (minute hour day-of-month month
day-of-week) or @yearly, @monthly, @weekly, @daily, @hourly, @every <duration>. A `TZ=`/`CRON_TZ=` prefix is
rejected: set `timeZone` instead.

Fails:

    kind: RayCronJob
    spec:
      schedule: "CRON_TZ=Asia/Taipei 0 9 * * *"

Passes:

    kind: RayCronJob
    spec:
      schedule: "0 9 * * *"
      timeZone: Asia/Taipei
"""
from __future__ import annotations

from typing import Iterator

from ..lint.context import LintContext
from ..lint.go_formats import cron_error
from ..lint.ray_objects import objects_of
from ..problems import Problem

ID = "raycronjob/schedule"
SEVERITY = "error"
SUMMARY = "schedule is a 5-field cron expression or descriptor without TZ/CRON_TZ"
VERSIONS = ">=1.6"


def check(context: LintContext) -> Iterator[Problem]:
    for obj, spec in objects_of(context, "RayCronJob"):
        schedule = spec.get("schedule")
        path = ("spec", "schedule")
        if not isinstance(schedule, str):
            continue  # missing or mistyped: schema validation reports it
        if "TZ" in schedule:
            yield obj.problem(f"schedule '{schedule}' carries a time zone (TZ or CRON_TZ); remove it and set "
                              "spec.timeZone instead", path)
            continue
        error = cron_error(schedule)
        if error:
            yield obj.problem(f"schedule '{schedule}' does not parse: {error}; write five fields such as "
                              "'0 * * * *' or a descriptor such as @daily", path)
