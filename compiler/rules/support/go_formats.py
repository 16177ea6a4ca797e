"""Formats the operator parses with Go libraries: time.ParseDuration, time.LoadLocation and robfig/cron v3.

The cron validator follows robfig/cron v3's `ParseStandard` (what the RayCronJob controller calls) rule for
rule, rather than a general-purpose cron library: that parser has no `L`, `W`, `#`, `H` or `R`, its
day-of-week stops at 6, it accepts `?` (like `*`) in every field, and `@every` clamps anything below one
second up to one second instead of rejecting it.
"""
from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass

# ---- time.ParseDuration ------------------------------------------------------------------------------------

_NS_PER_UNIT = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
                "m": 60_000_000_000, "h": 3_600_000_000_000}
_DURATION_PART = re.compile(r"([0-9]*)(?:\.([0-9]*))?([^0-9.]+)")
_INT64_MAX = (1 << 63) - 1


def go_duration_nanoseconds(text: str) -> int | None:
    """Nanoseconds of a Go duration ('5m', '1h30m', '-1.5s', '0'); None when time.ParseDuration fails."""
    body = text[1:] if text[:1] in ("+", "-") else text
    negative = text.startswith("-")
    if body == "0":
        return 0
    if not body:
        return None
    total = 0
    position = 0
    while position < len(body):
        part = _DURATION_PART.match(body, position)
        if part is None:
            return None
        whole, fraction, unit = part.group(1), part.group(2), part.group(3)
        if (not whole and not fraction) or unit not in _NS_PER_UNIT:
            return None  # '.s' has no digits; 'd', 'H', '1 h' are not Go units
        scale = _NS_PER_UNIT[unit]
        total += int(whole or "0") * scale + (int(fraction) * scale // 10 ** len(fraction) if fraction else 0)
        position = part.end()
    if total > _INT64_MAX + (1 if negative else 0):
        return None  # Go reports "invalid duration" on int64 overflow
    return -total if negative else total


def go_duration_seconds(text: str) -> float | None:
    """Seconds of a Go duration ('5m', '1h30m', '0'); None when Go would not parse it."""
    nanoseconds = go_duration_nanoseconds(text)
    return None if nanoseconds is None else nanoseconds / 1e9


# ---- time.LoadLocation ---------------------------------------------------------------------------------------

def go_location_known(zone: str) -> bool:
    """Whether time.LoadLocation accepts the name ('' and 'UTC' mean UTC, 'Local' the operator's zone)."""
    if zone in ("", "UTC", "Local"):
        return True
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


# ---- robfig/cron v3 ParseStandard ----------------------------------------------------------------------------

DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")


@dataclass(frozen=True)
class CronField:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()  # names[i] means low + i, matched case-insensitively


STANDARD_FIELDS = (
    CronField("minute", 0, 59),
    CronField("hour", 0, 23),
    CronField("day-of-month", 1, 31),
    CronField("month", 1, 12, ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")),
    CronField("day-of-week", 0, 6, ("sun", "mon", "tue", "wed", "thu", "fri", "sat")),
)
_GO_INT = re.compile(r"^[+-]?[0-9]+$")  # strconv.Atoi: an optional sign, then ASCII digits


class _CronError(ValueError):
    pass


def _number(text: str, field: CronField | None = None) -> int:
    """parseIntOrName: a field's name (any case) or a non-negative decimal integer."""
    if field is not None and text.lower() in field.names:
        return field.low + field.names.index(text.lower())
    if not _GO_INT.fullmatch(text) or abs(int(text)) > _INT64_MAX:
        raise _CronError(f"'{text}' is not a number")
    value = int(text)
    if value < 0:
        raise _CronError(f"negative number {value} is not allowed")
    return value


def _check_range(expr: str, field: CronField) -> None:
    """One item of a comma list: `*`, `?`, a value, `a-b`, each optionally `/step` (getRange)."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    if low_and_high[0] in ("*", "?"):
        start, end = field.low, field.high  # robfig ignores anything after '*-' here
    else:
        start = _number(low_and_high[0], field)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _number(low_and_high[1], field)
        else:
            raise _CronError(f"too many hyphens in '{expr}'")
    if len(range_and_step) == 2:
        step = _number(range_and_step[1])
        if len(low_and_high) == 1:
            end = field.high  # 'N/step' means 'N-max/step'
        if step == 0:
            raise _CronError(f"step of '{expr}' must be positive")
    elif len(range_and_step) > 2:
        raise _CronError(f"too many slashes in '{expr}'")
    if start < field.low:
        raise _CronError(f"{field.name} '{expr}' starts below {field.low}")
    if end > field.high:
        raise _CronError(f"{field.name} '{expr}' ends above {field.high}")
    if start > end:
        raise _CronError(f"{field.name} range '{expr}' starts after it ends")


def _descriptor_error(spec: str) -> str:
    if spec in DESCRIPTORS:
        return ""
    if spec.startswith("@every "):
        if go_duration_nanoseconds(spec[len("@every "):]) is None:
            return f"bad duration in '{spec}' (write a Go duration such as 90s, 5m or 1h30m)"
        return ""  # robfig clamps anything under a second (even 0 or negative) to one second
    return f"unrecognized descriptor '{spec}' (use {', '.join(DESCRIPTORS)} or @every <duration>)"


def cron_error(schedule: str) -> str:
    """Why robfig/cron v3's ParseStandard would reject a schedule; '' when it accepts it.

    A leading `TZ=<zone> ` or `CRON_TZ=<zone> ` is part of what ParseStandard accepts; whether the caller
    allows it (KubeRay 1.7 forbids it) is the caller's business.
    """
    spec = schedule
    if not spec:
        return "the schedule is empty"
    if spec.startswith(("TZ=", "CRON_TZ=")):
        space = spec.find(" ")
        if space < 0:
            return "a TZ=/CRON_TZ= prefix must be followed by a space and the schedule"
        zone = spec[spec.index("=") + 1:space]
        if not go_location_known(zone):
            return f"unknown time zone '{zone}'"
        spec = spec[space:].strip()
    if spec.startswith("@"):
        return _descriptor_error(spec)
    fields = spec.split()
    if len(fields) != len(STANDARD_FIELDS):
        return f"expected exactly 5 fields (minute hour day-of-month month day-of-week), found {len(fields)}"
    try:
        for text, field in zip(fields, STANDARD_FIELDS, strict=True):
            for expr in (item for item in text.split(",") if item):  # robfig skips empty list items
                _check_range(expr, field)
    except _CronError as err:
        return str(err)
    return ""
