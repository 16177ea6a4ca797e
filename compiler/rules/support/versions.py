"""Operator and Ray versions as rules read them: lenient parsing of tags, and the operator versions a rule applies
to (`About.versions`).

A rule states its versions as comparisons of release numbers, PEP 440's operators for them: '>=1.7', or several
joined by commas ('>=1.5,<1.7'), numbers compared as PEP 440 compares releases (zeros padded: 1.7 is 1.7.0). That
is all rules need, and asking `packaging` for it cost every compiling command its specifier grammar, the slowest
regular expression krc loaded (20-37 ms of a one-environment render, more than any module of krc's own).
"""
from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable

Version = tuple[int, ...]


_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")
_CLAUSE = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(\d+(?:\.\d+)*)\s*$")
_COMPARISONS: dict[str, Callable[[Version, Version], bool]] = {
    ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt, "==": operator.eq, "!=": operator.ne}


def parse_version(text: str) -> Version | None:
    """'1.7.0', 'v2.52.0', '2.52.0-py312' -> (1, 7, 0); None when the text does not start like a version."""
    return _parse_version(str(text).strip())


@functools.lru_cache(maxsize=1024)  # rules read the same few rayVersions and image tags for every group
def _parse_version(text: str) -> Version | None:
    match = _VERSION.match(text)
    if not match:
        return None
    return tuple(int(part) for part in match.groups(default="0"))


@functools.lru_cache(maxsize=64)
def version_clauses(versions: str) -> tuple[tuple[str, Version], ...]:
    """'>=1.5,<1.7' -> (('>=', (1, 5)), ('<', (1, 7))); ValueError for anything else (a rule's declaration)."""
    clauses = []
    for part in versions.split(","):
        match = _CLAUSE.match(part)
        if match is None:
            raise ValueError(f"bad version spec {versions!r}: write comparisons of release numbers, e.g. '>=1.7' "
                             "or '>=1.5,<1.7'")
        clauses.append((match[1], tuple(int(number) for number in match[2].split("."))))
    return tuple(clauses)


def _padded(version: Version, width: int) -> Version:
    return version + (0,) * (width - len(version))


@functools.lru_cache(maxsize=1024)  # asked for every rule of every environment, of a handful of versions
def applies_to(versions: str, operator_version: str) -> bool:
    """`versions` is a rule's version_clauses ('' for all); a version that does not parse counts as matching (the
    rule runs rather than silently not)."""
    if not versions:
        return True
    clauses = version_clauses(versions)
    parsed = parse_version(operator_version)
    if parsed is None:
        return True
    for comparison, bound in clauses:
        width = max(len(parsed), len(bound))
        if not _COMPARISONS[comparison](_padded(parsed, width), _padded(bound, width)):
            return False
    return True
