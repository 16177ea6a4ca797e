"""What a lint rule is: a module with these names, checked by mypy against the `Rule` protocol.

A rule module states its id, severity, one-line summary, the operator versions it applies to (a PEP 440
specifier such as '>=1.7', '' for all) and whether it needs a whole environment; its docstring documents it with
a failing and a passing example; `check` returns its findings on a context of defaulted objects.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from ..diagnostics.problems import Problem, Severity
from .support.context import LintContext

SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
_BY_NAME: dict[str, Severity] = {name: name for name in SEVERITIES}


def as_severity(text: str) -> Severity:
    """A rule's SEVERITY or a lint setting's severity as the Problem type; anything else is a programming error
    (settings are checked before the rules run, rule severities by a test)."""
    return _BY_NAME[text]


class Rule(Protocol):
    ID: str
    SEVERITY: str  # one of SEVERITIES (a module constant reads as str to mypy; a test checks the value)
    SUMMARY: str
    VERSIONS: str
    ENVIRONMENT_ONLY: bool
    __doc__: str | None

    def check(self, context: LintContext) -> Iterable[Problem]: ...
