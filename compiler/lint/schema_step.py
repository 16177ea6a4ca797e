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
    return start(context).finish()


class SchemaValidation:
    """One context's objects sent to the engine (`start`); `finish` waits for the verdicts."""

    def __init__(self, context: LintContext, schemas: SchemaSet | None) -> None:
        self.context = context
        self._schemas = schemas
        self._judged = [obj for obj in context.objects if schemas.knows(obj.document)] if schemas else []
        self._started = schemas.start_many([obj.document for obj in self._judged],
                                           [obj.positions for obj in self._judged]) if schemas else None

    def finish(self) -> tuple[LintContext, list[Problem]]:
        """The context with every object as the API server stores it, and the schema findings."""
        schemas, context = self._schemas, self.context
        if schemas is None or self._started is None:
            return context, []
        results = iter(self._started.results())
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


def start(context: LintContext) -> SchemaValidation:
    """The context's custom resources sent to the engine now, judged while the caller does other work."""
    return SchemaValidation(context, _schema_set(context))
