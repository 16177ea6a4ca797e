"""Kubernetes schema validation of what is not KubeRay's: the operator chart's objects, Namespaces and
ServiceAccounts, against the strict schemas of the environment's Kubernetes version.

A chart object's field comes from a Helm value, so its finding points at the environment line of that value:
the value tree is searched for the key Helm copied (`resources.limit` with the same content), else the nearest
parent that matches, else `operator.values`.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..diagnostics.problems import Location, Problem
from ..rules.support.context import LintContext, LintObject
from ..validation import kubernetes_schemas

# Plain Kubernetes kinds krc itself renders (the chart's objects are all validated)
RENDERED_KINDS = frozenset({("v1", "Namespace"), ("v1", "ServiceAccount")})
MAX_PARENT_STEPS = 4


def _value_at(document: Any, path: tuple[str | int, ...]) -> tuple[bool, Any]:
    for step in path:
        if isinstance(document, dict) and isinstance(step, str) and step in document:
            document = document[step]
        elif isinstance(document, list) and isinstance(step, int) and 0 <= step < len(document):
            document = document[step]
        else:
            return False, None
    return True, document


def _paths_with(values: Any, key: str, wanted: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    if not isinstance(values, dict):
        return
    for name, value in values.items():
        here = prefix + (str(name),)
        if str(name) == key and value == wanted:
            yield here
        yield from _paths_with(value, key, wanted, here)


def values_path(helm_values: dict[str, Any] | None, document: dict[str, Any],
                path: tuple[str | int, ...]) -> tuple[str, ...] | None:
    """The Helm value an object's field was copied from, found by key and content."""
    for cut in range(len(path), max(len(path) - MAX_PARENT_STEPS, 0), -1):
        step = path[cut - 1]
        if not isinstance(step, str):
            continue
        found, value = _value_at(document, path[:cut])
        if not found:
            continue
        matches = sorted(_paths_with(helm_values or {}, step, value))
        if matches:
            return matches[0]
    return None


def _chart_location(context: LintContext, obj: LintObject, path: tuple[str | int, ...]) -> tuple[Location, str]:
    source = values_path(context.helm_values, obj.document, path)
    if source is None:
        return obj.location, ""
    return context.environment_location(("operator", "values") + source), "operator.values." + ".".join(source)


def validate(context: LintContext) -> list[Problem]:
    version = context.kubernetes_version
    if not version:
        return []
    problems: list[Problem] = []
    for obj in context.objects:
        if (obj.api_version, obj.kind) not in RENDERED_KINDS:
            continue
        for error in kubernetes_schemas.validate(version, obj.document):
            problems.append(Problem(f"{error.message}; fix or remove it", obj.locate(error.path), "error",
                                    error.check, obj.ref, error.path))
    for obj in context.chart_objects:
        for error in kubernetes_schemas.validate(version, obj.document):
            where, source = _chart_location(context, obj, error.path)
            origin = f"set by {source}" if source else "rendered by the chart from operator.values"
            problems.append(Problem(f"{obj.kind} {obj.name} of the operator chart: {error.message}, {origin}; "
                                    "fix the Helm value", where, "error", error.check, obj.ref, error.path))
    return problems
