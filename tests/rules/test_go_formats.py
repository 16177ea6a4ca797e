"""The Go formats the operator parses, table-driven: what robfig/cron v3 ParseStandard and time.ParseDuration
accept and reject (the tables follow those parsers' code, not a general cron library)."""
from __future__ import annotations

import pytest

from compiler.rules.support.go_formats import cron_error, go_duration_nanoseconds, go_location_known

ACCEPTED_SCHEDULES = [
    "0 3 * * *",
    "*/5 9-17 * JAN-DEC MON-FRI",
    "0 0 * * 0",
    "0 0 * * 6",
    "0 0 * * 0-6",
    "0 0 1 1 *",
    "59 23 31 12 6",
    "0 0 ? * ?",          # '?' is a star in robfig, in any field
    "? ? ? ? ?",
    "0,15,30,45 * * * *",
    "1,,2 * * * *",       # empty list items are skipped (strings.FieldsFunc)
    "5/15 * * * *",       # N/step means N-max/step
    "10-50/20 * * * *",
    "*/1 * * * *",
    "0 0 * jan,Feb,MAR sun",
    "0 0 * * mon-sat",
    "+5 * * * *",         # strconv.Atoi takes a sign
    "  0   3 * * *  ",    # fields are split on any run of white space
    "0 0 31 2 *",         # never fires, but parses
    "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly",
    "@every 1h30m",
    "@every 0s",          # clamped to one second
    "@every 0",
    "@every 500ms",
    "@every -5m",         # negative durations are clamped too
    "@every 1.5h",
    "TZ=UTC 0 * * * *",   # ParseStandard itself accepts a zone prefix (KubeRay 1.7 forbids it separately)
    "CRON_TZ=Europe/Berlin 0 3 * * *",
    "CRON_TZ=Asia/Taipei @daily",
]

REJECTED_SCHEDULES = [
    ("", "empty"),
    ("invalid cron string", "found 3"),
    ("0 0 * * * *", "found 6"),
    ("0 0 * *", "found 4"),
    ("61 * * * *", "ends above 59"),
    ("0 24 * * *", "ends above 23"),
    ("0 0 0 * *", "starts below 1"),
    ("0 0 32 * *", "ends above 31"),
    ("0 0 * 13 *", "ends above 12"),
    ("0 0 * 0 *", "starts below 1"),
    ("0 0 * * 7", "ends above 6"),          # croniter takes 7 as Sunday; robfig does not
    ("0 0 * * 1-7", "ends above 6"),
    ("0 0 * * 5-1", "starts after it ends"),
    ("R 0 * * *", "'R' is not a number"),    # Jenkins-style random
    ("H 0 * * *", "'H' is not a number"),    # Jenkins-style hash
    ("H/5 * * * *", "'H' is not a number"),
    ("0 0 L * *", "'L' is not a number"),
    ("0 0 15W * *", "'15W' is not a number"),
    ("0 0 * * 5#3", "'5#3' is not a number"),
    ("0 0 * * 5L", "'5L' is not a number"),
    ("0 0 * january *", "'january' is not a number"),  # only three-letter names
    ("0 0 * * sunday", "'sunday' is not a number"),
    ("0 0 * JAN-13 *", "ends above 12"),
    ("*/0 * * * *", "must be positive"),
    ("1/2/3 * * * *", "too many slashes"),
    ("1-2-3 * * * *", "too many hyphens"),
    ("-5 * * * *", "'' is not a number"),
    ("5- * * * *", "'' is not a number"),
    ("*/x * * * *", "'x' is not a number"),
    ("*/-1 * * * *", "negative number"),
    ("1.5 * * * *", "'1.5' is not a number"),
    ("@every", "unrecognized descriptor"),
    ("@every soon", "bad duration"),
    ("@every 1d", "bad duration"),          # Go has no day unit
    ("@every 5", "bad duration"),           # a unit is required
    ("@every  1h", "bad duration"),         # the duration starts right after one space
    ("@every 1h ", "bad duration"),
    ("@DAILY", "unrecognized descriptor"),  # descriptors are case sensitive
    ("@daily ", "unrecognized descriptor"),
    ("@reboot", "unrecognized descriptor"),
    (" @daily", "found 1"),                 # not a descriptor once it does not start with '@'
    ("TZ=Mars/Olympus 0 * * * *", "unknown time zone 'Mars/Olympus'"),
    ("CRON_TZ=UTC", "must be followed by a space"),
    ("CRON_TZ=UTC 0 0 * * 7", "ends above 6"),
]


@pytest.mark.parametrize("schedule", ACCEPTED_SCHEDULES)
def test_robfig_standard_parser_accepts(schedule: str) -> None:
    assert cron_error(schedule) == ""


@pytest.mark.parametrize(("schedule", "reason"), REJECTED_SCHEDULES)
def test_robfig_standard_parser_rejects(schedule: str, reason: str) -> None:
    error = cron_error(schedule)
    assert reason in error, f"{schedule!r}: {error!r}"


DURATIONS = [
    ("0", 0), ("+0", 0), ("-0", 0), ("5m", 300 * 10**9), ("1h30m", 5400 * 10**9), ("1.5s", 1_500_000_000),
    (".5s", 500_000_000), ("1.s", 10**9), ("-2m", -120 * 10**9), ("300ms", 300_000_000), ("2us", 2_000),
    ("2µs", 2_000), ("2μs", 2_000), ("7ns", 7), ("1h1m1s1ms", 3_661_001_000_000),
    ("2562047h47m16.854775807s", (1 << 63) - 1),
    ("", None), ("5", None), ("1d", None), ("1H", None), ("s", None), (".s", None), ("1.5.5s", None),
    (" 1h", None), ("1h ", None), ("1 h", None), ("1e3s", None), ("2562048h", None), ("--1s", None),
]


@pytest.mark.parametrize(("text", "nanoseconds"), DURATIONS)
def test_go_parse_duration(text: str, nanoseconds: int | None) -> None:
    assert go_duration_nanoseconds(text) == nanoseconds


@pytest.mark.parametrize(("zone", "known"), [("UTC", True), ("", True), ("Local", True), ("Asia/Taipei", True),
                                             ("Europe/Berlin", True), ("Asia/Taipie", False),
                                             ("Invalid/Timezone", False), ("../etc/passwd", False)])
def test_go_load_location(zone: str, known: bool) -> None:
    assert go_location_known(zone) is known
