"""Credentials in Kubernetes objects: which names say a value is one, and how reports hide them.

Rendered files keep every value (they are what gets deployed); reports for people (`krc diff` in every format,
`krc explain`) show `***` instead of the value of an environment variable whose name says it holds a credential,
of a literal Redis password, and of a Secret's `data` and `stringData`.
"""
from __future__ import annotations

import re
from typing import Any

REDACTED = "***"
_CREDENTIAL_WORDS = frozenset({"TOKEN", "PASSWORD", "PASSWD", "SECRET", "CREDENTIAL", "CREDENTIALS", "APIKEY",
                               "ACCESSKEY"})
_KEY_QUALIFIERS = frozenset({"API", "ACCESS", "PRIVATE"})  # a bare KEY (CACHE_KEY, SORT_KEY) is no credential
_PASSWORD_KEYS = frozenset({"redis-password", "redisPassword"})
_SECRET_FIELDS = ("data", "stringData")
# `NAME: value`, `NAME=value`, `"NAME": "value"` on one line of text (a diff line may start with + - or space)
_ASSIGNMENT = re.compile(r"^(?P<lead>[-+ ]?\s*(?:-\s+)?[\"']?)(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)"
                         r"(?P<sep>[\"']?\s*[:=]\s*)(?P<value>\S.*)$")
_ENV_NAME_LINE = re.compile(r"^[-+ ]?\s*(?:-\s+)?name:\s*[\"']?(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)")
_ENV_VALUE_LINE = re.compile(r"^(?P<lead>[-+ ]?\s*(?:-\s+)?value:\s*)(?P<value>\S.*)$")
_NAMED_VALUE_PATH = re.compile(r"\[name=(?P<name>[^\]]+)\]\.value$")
_SECRET_PATH = re.compile(r"^(data|stringData)(\.|\[|$)")


def names_credential(name: str) -> bool:
    """Whether an env var name says it holds a credential: a credential word, matched as a whole word."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name.upper()) if w]
    if any(word in _CREDENTIAL_WORDS for word in words):
        return True
    return any(first in _KEY_QUALIFIERS and second == "KEY" for first, second in zip(words, words[1:], strict=False))


def redact(value: Any, kind: str = "") -> Any:
    """A copy of `value` (an object, or any part of one) with credential values replaced by `***`; `kind` says
    whether `value` is a whole Secret."""
    if kind == "Secret" and isinstance(value, dict):
        return {k: ({key: REDACTED for key in v} if k in _SECRET_FIELDS and isinstance(v, dict) else redact(v))
                for k, v in value.items()}
    if isinstance(value, dict):
        named = isinstance(value.get("name"), str) and names_credential(value["name"])
        # an env item {name: AWS_SECRET_ACCESS_KEY, value: ...}, or a map entry AWS_SECRET_ACCESS_KEY: ... (the
        # environment files' env maps, Helm values)
        return {k: (REDACTED if (named and k == "value" and v is not None) or (isinstance(v, str) and (
                    k in _PASSWORD_KEYS or names_credential(str(k))))
                    else {**redact(v), "value": REDACTED} if k in _PASSWORD_KEYS and isinstance(v, dict)
                    and "value" in v else redact(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [redact(item) for item in value]
    return value


def redact_at(path: str, value: Any, kind: str = "") -> Any:
    """`value` found at `path` (review notation: `spec.x[name=AWS_SECRET_KEY].value`) inside an object of `kind`."""
    if value is None:
        return None
    match = _NAMED_VALUE_PATH.search(path)
    if match and names_credential(match["name"]):
        return REDACTED
    if kind == "Secret" and _SECRET_PATH.match(path):
        return REDACTED if not isinstance(value, dict) else {k: REDACTED for k in value}
    if re.search(r"(\.|\[\")(redis-password|redisPassword)(\"\])?(\.value)?$", path):
        return REDACTED
    segments = [segment.strip('"]') for segment in re.split(r"[.\[]", path)]
    if isinstance(value, str) and (names_credential(segments[-1]) or (
            segments[-1] == "value" and len(segments) > 1 and names_credential(segments[-2]))):
        return REDACTED
    return redact(value)


def redact_lines(lines: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Lines of YAML-ish text or a unified diff of it, with credential values replaced: `NAME: value`,
    `NAME=value`, and a `value:` line right after `name: NAME` (an env list)."""
    out: list[str] = []
    pending = False  # the previous line named a credential env var
    for line in lines:
        value_line = _ENV_VALUE_LINE.match(line)
        if pending and value_line:
            out.append(value_line["lead"] + REDACTED)
            pending = False
            continue
        name_line = _ENV_NAME_LINE.match(line)
        pending = bool(name_line and names_credential(name_line["name"]))
        assignment = _ASSIGNMENT.match(line)
        if assignment and not name_line and (names_credential(assignment["name"])
                                             or assignment["name"] in _PASSWORD_KEYS):
            line = assignment["lead"] + assignment["name"] + assignment["sep"] + REDACTED
        out.append(line)
    return tuple(out)
