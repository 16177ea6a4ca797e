"""What a lint rule is: a module with these names, checked by mypy against the `Rule` protocol.

A rule module states what it is in one `ABOUT = About(...)`; its docstring documents it with a failing and a
passing example; `check` returns its findings on a context of defaulted objects.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from ..diagnostics.problems import Problem, Severity
from .support.context import LintContext

SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
_BY_NAME: dict[str, Severity] = {name: name for name in SEVERITIES}


def as_severity(text: str) -> Severity:
    """A lint setting's severity as the Problem type; anything else is a programming error (settings are checked
    before the rules run)."""
    return _BY_NAME[text]


@dataclass(frozen=True)
class About:
    """What a rule states about itself: its id, its severity, its one-line summary (what `krc rules` lists), the
    operator versions it applies to (comparisons of release numbers such as '>=1.7', support/versions.py; '' for
    all), whether it needs a whole environment (its destination, its peers, Ray's view) rather than a file of
    objects, and whether it reads Ray's autoscaler view (context.autoscaler): such a rule finds nothing without
    one, and only such rules find anything else with one, so `krc lint` adds their findings to the compile's (made
    without the view) instead of running every rule again."""

    id: str
    severity: Severity
    summary: str
    versions: str = ""
    environment_only: bool = False
    reads_autoscaler_view: bool = False


class Rule(Protocol):
    ABOUT: About
    __doc__: str | None

    def check(self, context: LintContext) -> Iterable[Problem]: ...
