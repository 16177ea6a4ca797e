"""Every feature gate given to the operator is one its version knows.

The operator refuses to start on an unknown gate name (for example AsyncJobInfoQuery, removed in 1.7.0, or
RayCronJob before 1.6), and the chart renders a non-boolean `enabled` as garbage.

Fails (environment, operator 1.7.0):

    operator:
      featureGates: {AsyncJobInfoQuery: true}

Passes:

    operator:
      featureGates: {RayCronJob: true}
"""
from __future__ import annotations

import difflib
from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.feature_gates import known_gates

ABOUT = About("operator/unknown-feature-gate", "error",
              "feature gate names exist in the operator version and are booleans", environment_only=True)


def check(context: LintContext) -> Iterator[Problem]:
    known = known_gates(context.operator_version)
    entries = (context.helm_values or {}).get("featureGates") or []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        name = str(entry.get("name", ""))
        path = ("operator", "featureGates", name)
        if name not in known:
            near = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
            hint = f"did you mean '{near[0]}'? " if near else ""
            yield context.environment_problem(
                f"feature gate '{name}' does not exist in kuberay-operator {context.operator_version}, which then "
                f"refuses to start; {hint}remove it or pick a gate of that version ({', '.join(sorted(known))})", path)
        elif not isinstance(entry.get("enabled"), bool):
            yield context.environment_problem(f"feature gate '{name}' has enabled: {entry.get('enabled')!r}; use true "
                                              "or false", path)
