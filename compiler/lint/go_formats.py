"""Formats the operator parses with Go libraries: time.ParseDuration and robfig/cron's standard parser."""
from __future__ import annotations

import re

from croniter import croniter

_DURATION = re.compile(r"^[-+]?((\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")


def go_duration_seconds(text: str) -> float | None:
    """Seconds of a Go duration ('5m', '1h30m', '0'); None when Go would not parse it."""
    if text == "0" or text in ("+0", "-0"):
        return 0.0
    if not _DURATION.match(text):
        return None
    total = sum(float(n) * _UNIT_SECONDS[u] for n, u in _PART.findall(text))
    return -total if text.startswith("-") else total


def cron_error(schedule: str) -> str:
    """Why robfig/cron's ParseStandard would reject a schedule; '' when it accepts it."""
    text = schedule.strip()
    if text.startswith("@"):
        if text in DESCRIPTORS:
            return ""
        if text.startswith("@every "):
            seconds = go_duration_seconds(text[len("@every "):].strip())
            return "" if seconds is not None and seconds > 0 else f"bad duration in '{text}'"
        return f"unrecognized descriptor '{text}'"
    fields = text.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields (minute hour day-of-month month day-of-week), found {len(fields)}"
    if re.search(r"[LW#]", text.upper().replace("WED", "").replace("JUL", "")):
        return "L, W and # are not supported by the operator's cron parser"
    if not croniter.is_valid(text.replace("?", "*")):
        return f"'{text}' is not a valid cron expression"
    return ""
