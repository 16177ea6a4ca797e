"""Every Helm value given to the operator chart is one its templates read.

Helm silently ignores values a chart never reads (the KubeRay chart has no values.schema.json), so a typo
such as `watchNamespaces` for `watchNamespace` changes nothing. The paths a chart reads are collected from
its templates for the pinned version.

Fails (environment):

    operator:
      values:
        singleNamespaceInstal: true

Passes:

    operator:
      values:
        singleNamespaceInstall: true
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.chart_values import unread_values
from .support.context import LintContext

ABOUT = About("chart/unread-values", "error",
              "Helm values for the operator chart are paths its templates read", environment_only=True)


def check(context: LintContext) -> Iterator[Problem]:
    if context.chart is None or not isinstance(context.helm_values, dict):
        return
    for unread in unread_values(context.helm_values, context.chart):
        dotted = ".".join(unread.path)
        hint = f"did you mean '{unread.suggestion}'? " if unread.suggestion else ""
        yield context.environment_problem(
            f"Helm value '{dotted}' is not read by {context.chart.name} {context.chart.version}, so Helm ignores "
            f"it; {hint}fix or remove it", ("operator", "values") + unread.path)
