"""Schema validation before the rules: the API server defaults and checks every object against its CRD.

The engine judges every custom resource of the context in one request per CRD (compiler.validation).

The rules then see each object as the API server would store it (CRD defaults applied, unknown fields
pruned); objects of groups the CRDs do not define pass through unchanged.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ..charts.package import Crd
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
    return start(context).finish(context)


class SchemaValidation:
    """Objects sent to the engine (`start`, `start_documents`); `finish` waits for the verdicts."""

    def __init__(self, schemas: SchemaSet | None, documents: list[Any]) -> None:
        self._schemas = schemas
        self._documents = [document for document in documents if schemas.knows(document)] if schemas else []
        self._started = schemas.start_many(self._documents) if schemas else None

    def finish(self, context: LintContext) -> tuple[LintContext, list[Problem]]:
        """The context (whose objects are the documents sent) with every object as the API server stores it, and
        the schema findings."""
        schemas = self._schemas
        if schemas is None or self._started is None:
            return context, []
        judged = [obj for obj in context.objects if schemas.knows(obj.document)]
        if len(judged) != len(self._documents) or \
                any(obj.document is not sent for obj, sent in zip(judged, self._documents, strict=True)):
            return validate(context)  # not what was sent: judged afresh
        results = iter(self._started.results([obj.positions for obj in judged]))
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
    return SchemaValidation(_schema_set(context), [obj.document for obj in context.objects])


def start_documents(crds: Sequence[Crd], documents: list[Any]) -> SchemaValidation:
    """An environment's objects sent to the engine before its lint context is made (finish takes that context):
    judged against its chart's CRDs, as `start` would judge them."""
    return SchemaValidation(SchemaSet.from_crds(crds) if crds else None, documents)
