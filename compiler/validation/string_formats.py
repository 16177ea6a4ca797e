"""String formats and Kubernetes name shapes, each a cheap predicate compiled once.

The API server checks `format` on strings only; int32/int64 ranges on integers are checked here too because the
operator decodes those fields into Go int32/int64 and fails on a value out of range.
"""
from __future__ import annotations

import base64
import binascii
import datetime
import ipaddress
import re
from collections.abc import Callable
from typing import Any

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)

_DATE_TIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")


def as_text(value: Any) -> str:
    """YAML turns unquoted dates into date objects; the API server sees the same text as a string."""
    if isinstance(value, str):
        return value
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return str(value)


def _date_time(text: str) -> bool:
    if not _DATE_TIME.match(text):
        return False
    try:
        datetime.datetime.fromisoformat(text.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return False
    return True


def _date(text: str) -> bool:
    try:
        return bool(_DATE.fullmatch(text)) and bool(datetime.date.fromisoformat(text))
    except ValueError:
        return False


def _byte(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _ip(version: int) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        try:
            return ipaddress.ip_address(text).version == version
        except ValueError:
            return False
    return check


def _cidr(text: str) -> bool:
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return "/" in text


# format name -> (predicate on the string, what a valid value looks like)
STRING_FORMATS: dict[str, tuple[Callable[[str], bool], str]] = {
    "date-time": (_date_time, "an RFC 3339 date-time such as 2026-01-31T12:00:00Z"),
    "date": (_date, "a date such as 2026-01-31"),
    "byte": (_byte, "base64-encoded data"),
    "uuid": (lambda t: bool(_UUID.fullmatch(t)), "a UUID"),
    "ipv4": (_ip(4), "an IPv4 address"),
    "ipv6": (_ip(6), "an IPv6 address"),
    "cidr": (_cidr, "a CIDR such as 10.0.0.0/16"),
}

INTEGER_FORMATS: dict[str, tuple[int, int]] = {"int32": INT32, "int64": INT64}
