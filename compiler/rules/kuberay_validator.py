"""KubeRay's own validators accept the object, at the version the operator runs.

The verdict of KubeRay's code itself (engine/kuberay: `utils.ValidateRayCluster*`, `ValidateRayJob*`,
`ValidateRayService*`, `ValidateRayCronJobSpec` and the admission webhooks' checks), fed the object as the API
server stores it and the operator as the chart configures it. Where it refuses, the controller records a
Warning event and does nothing with the object: no Pods, no job. The message is KubeRay's own; krc's other
rules say the same in the environment's terms. It runs for the KubeRay versions krc has a build of
(`make kuberay`; engine/kuberay/README.md); for another version it finds nothing (`krc show ENV --pods` says
which builds exist).

Fails (the controller stops: "worker group cpu has minReplicas 5 greater than maxReplicas 3"):

    workerGroupSpecs:
    - groupName: cpu
      minReplicas: 5
      maxReplicas: 3

Passes:

    workerGroupSpecs:
    - groupName: cpu
      minReplicas: 1
      maxReplicas: 3
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..diagnostics import fieldpath
from ..diagnostics.problems import Problem
from ..native import binary, kuberay
from .rule import About
from .support.context import LintContext

ABOUT = About("kuberay/validator", "error", "KubeRay's own validators and webhooks accept the object")


def _operator(context: LintContext) -> dict[str, Any]:
    """The chart's Deployment when the context has it (an environment); else the gates krc was given."""
    if context.chart_objects:
        return kuberay.operator_config([o.document for o in context.chart_objects])
    gates = ",".join(f"{name}={'true' if on else 'false'}" for name, on in sorted(context.feature_gates.items()))
    return {"args": [f"--feature-gates={gates}"] if gates else [], "env": []}


def _segments(field: str) -> tuple[Any, ...]:
    try:
        return fieldpath.parse(field) if field else ()
    except ValueError:
        return ()


def as_stored(document: dict[str, Any]) -> dict[str, Any]:
    """The object as the operator gets it: a generateName completed as the API server does (five characters
    added), which KubeRay's name validators then judge."""
    metadata = document.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("name") or not isinstance(metadata.get("generateName"), str):
        return document
    return {**document, "metadata": {**metadata, "name": metadata["generateName"] + "x2k9q"}}


def check(context: LintContext) -> Iterator[Problem]:
    objects = context.kuberay_objects()
    if not objects or not binary.binary_for(context.operator_version).is_file():
        return
    try:
        answers = kuberay.verdicts(context.operator_version, _operator(context),
                                   [as_stored(o.document) for o in objects])
    except kuberay.OperatorRefused:
        return  # an operator that does not start (an unknown gate): operator/unknown-feature-gate says so
    for obj, answer in zip(objects, answers, strict=True):
        for refusal in answer.get("refusals") or []:
            by = ("its admission webhook (when installed; the chart installs none)" if refusal.get("webhook")
                  else str(refusal.get("by")))
            said = " ".join(str(refusal.get("message")).split("\n")).rstrip(". ")  # joined errors come one a line
            yield obj.problem(f"KubeRay {context.operator_version} refuses {obj.kind} {obj.name} ({by}): {said}; "
                              "the operator creates nothing for it: change what KubeRay names",
                              _segments(str(refusal.get("field") or "")))
