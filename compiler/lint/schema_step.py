"""Schema validation before the rules: the API server defaults and checks every object against its CRD.

The engine judges every custom resource of the context in one request per CRD (compiler.validation).

The rules then see each object as the API server would store it (CRD defaults applied, unknown fields
pruned); objects of groups the CRDs do not define pass through unchanged.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from ..diagnostics.problems import Problem
from ..rules.support.context import LintContext, LintObject
from ..validation import SchemaSet, load_crds_from_path


def _schema_set(context: LintContext) -> SchemaSet | None:
    crds: list[Any] = list(context.chart.crds) if context.chart is not None else []
    if context.extra_crds:
        crds += load_crds_from_path(context.extra_crds)
    return SchemaSet.from_crds(crds) if crds else None  # the engine compiles each CRD once, by digest


def _placed(problem: Problem, obj: LintObject) -> Problem:
    """Without file positions (environments), a schema problem points at the environment item of its object."""
    if problem.location is not None:
        return problem
    return dataclasses.replace(problem, location=obj.locate(problem.segments))


def validate(context: LintContext) -> tuple[LintContext, list[Problem]]:
    schemas = _schema_set(context)
    if schemas is None:
        return context, []
    judged = [obj for obj in context.objects if schemas.knows(obj.document)]
    results = iter(schemas.validate_many([obj.document for obj in judged], [obj.positions for obj in judged]))
    objects = []
    problems: list[Problem] = []
    for obj in context.objects:
        if not schemas.knows(obj.document):
            objects.append(obj)
            continue
        result = next(results)
        problems.extend(_placed(p, obj) for p in result.problems)
        defaulted = result.defaulted if isinstance(result.defaulted, dict) else obj.document
        objects.append(dataclasses.replace(obj, document=defaulted))
    return dataclasses.replace(context, objects=tuple(objects)), problems
