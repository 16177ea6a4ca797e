"""A RayCronJob schedule is what the operator's cron parser accepts: 5 fields or a descriptor.

The operator parses it with robfig/cron v3's standard parser: five fields (minute 0-59, hour 0-23,
day-of-month 1-31, month 1-12 or JAN-DEC, day-of-week 0-6 or SUN-SAT; `*`, `?`, lists, ranges, steps) or
@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly, @every <Go duration>. No `L`, `W`, `#`, `H`
or `R`, and Sunday is 0 only (not 7).

Time zones depend on the version. From 1.7 a schedule containing `TZ` is rejected (`TZ=`/`CRON_TZ=`
prefixes included): set `spec.timeZone` instead. On 1.6 there is no `timeZone` field and the parser itself
accepts a `TZ=<zone> ` or `CRON_TZ=<zone> ` prefix, so only an unknown zone there is an error.

Fails (1.7):

    kind: RayCronJob
    spec:
      schedule: "CRON_TZ=Asia/Taipei 0 9 * * *"

Passes (1.7):

    kind: RayCronJob
    spec:
      schedule: "0 9 * * *"
      timeZone: Asia/Taipei
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.go_formats import cron_error
from .support.ray_objects import objects_of
from .support.versions import applies_to

ABOUT = About("raycronjob/schedule", "error",
              "schedule is a 5-field cron or descriptor robfig/cron accepts, without TZ/CRON_TZ from 1.7",
              versions=">=1.6")


def check(context: LintContext) -> Iterator[Problem]:
    rejects_time_zone = applies_to(">=1.7", context.operator_version)
    for obj, spec in objects_of(context, "RayCronJob"):
        schedule = spec.get("schedule")
        path = ("spec", "schedule")
        if not isinstance(schedule, str):
            continue  # missing or mistyped: schema validation reports it
        if rejects_time_zone and "TZ" in schedule:
            yield obj.problem(f"schedule '{schedule}' carries a time zone (TZ or CRON_TZ); remove it and set "
                              "spec.timeZone instead", path)
            continue
        error = cron_error(schedule)
        if error:
            yield obj.problem(f"schedule '{schedule}' does not parse: {error}; write five fields such as "
                              "'0 * * * *' or a descriptor such as @daily", path)
