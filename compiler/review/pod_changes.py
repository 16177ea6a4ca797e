"""What a change to a custom resource does to the Pods KubeRay creates, from KubeRay's own builders
(compiler/native/kuberay.py) at the pinned version: the object as golden/ holds it and as rendered, both
defaulted by the pinned chart's CRDs, built with the chart's operator configuration, and compared group by group.

Each changed object gets one consequence: for every group whose Pod changes, the flags its `ray start` gains,
loses or changes, and which other Pod fields change (by path only: values may be credentials); then who gets it: a
RayCluster replaces its running Pods only under `upgradeStrategy.type: Recreate`; otherwise only Pods created
from then on carry the change. Without a build of the pinned version there is nothing to add (`krc show --pods`
names the missing build).
"""
from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Sequence
from typing import Any

from ..k8s.objects import key_of
from ..native import binary, kuberay
from ..render.templates import Render
from ..rules.kuberay_validator import as_stored
from .fielddiff import diff_documents
from .labels import Label
from .model import EnvironmentReview

KINDS = frozenset({"RayCluster", "RayJob", "RayService", "RayCronJob"})
# what differs between any two builds and says nothing about the change
_IGNORED = ("metadata.ownerReferences", "metadata.annotations[\"ray.io/hash")


def _flags(pod: dict[str, Any]) -> list[str]:
    """The `ray start` flags of the Ray container, as KubeRay writes them into its command line."""
    containers = (pod.get("spec") or {}).get("containers") or [{}]
    line = " ".join(containers[0].get("args") or [])
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    return [w for w in words if w.startswith("--")]


def _who(kind: str, document: dict[str, Any]) -> str:
    if kind == "RayCluster":
        strategy = ((document.get("spec") or {}).get("upgradeStrategy") or {}).get("type")
        return ("every Pod is replaced (upgradeStrategy Recreate)" if strategy == "Recreate"
                else "only Pods created from now on get it: KubeRay replaces no running Pod of a RayCluster")
    if kind == "RayService":
        return "the Pods of the cluster the RayService rolls out next get it"
    return "the Pods of the next job's cluster get it"


def _flag_changes(before: list[str], after: list[str]) -> list[str]:
    """`gains --num-gpus=1`, `loses --block`, `--memory=1 -> --memory=2` for a flag whose value changed."""
    old_names = {f.split("=", 1)[0]: f for f in before}
    new_names = {f.split("=", 1)[0]: f for f in after}
    changed = [f"{old_names[n]} -> {f}" for n, f in new_names.items() if n in old_names and old_names[n] != f]
    gained = [f for n, f in new_names.items() if n not in old_names]
    lost = [f for n, f in old_names.items() if n not in new_names]
    return ([f"ray start gains {' '.join(gained)}"] if gained else []) + \
        ([f"ray start loses {' '.join(lost)}"] if lost else []) + \
        ([f"ray start {', '.join(changed)}"] if changed else [])


def _restates_ray_start(path: str) -> bool:
    """The Ray container's command line and its copy in KUBERAY_GEN_RAY_START_CMD: said by the flags."""
    return path.startswith("spec.containers[") and (path.endswith("].args[0]")
                                                   or "KUBERAY_GEN_RAY_START_CMD" in path)


def _group_message(where: str, old: dict[str, Any], new: dict[str, Any]) -> str | None:
    parts = _flag_changes(_flags(old), _flags(new))
    paths = sorted({c.path for c in diff_documents(old, new)
                    if not c.path.startswith(_IGNORED) and not (parts and _restates_ray_start(c.path))})
    if paths:
        shown = ", ".join(paths[:4]) + (f" and {len(paths) - 4} more" if len(paths) > 4 else "")
        parts.append(f"its Pod changes at {shown}")
    if not parts:
        return None
    return f"{where}: {'; '.join(parts)}"


def _groups(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {("the head Pod" if g["type"] == "head" else f"worker group '{g['group']}' Pods"): g["pod"]
            for cluster in answer.get("clusters") or [] for g in cluster["pods"]}


def _labels(kind: str, new_document: dict[str, Any], old: dict[str, Any], new: dict[str, Any]) -> list[Label]:
    """One consequence per object: every group whose Pod changes, then who gets it."""
    before, after = _groups(old), _groups(new)
    who = _who(kind, new_document)
    groups = [m for where in after if where in before and (m := _group_message(where, before[where], after[where]))]
    if not groups:
        return []
    impact = "replacement" if "replaced" in who or kind == "RayService" else "metadata only"
    return [Label("pods", f"{'; '.join(groups)} ({who})", impact)]


def with_pod_changes(review: EnvironmentReview, render: Render, before: Sequence[dict[str, Any]],
                     after: Sequence[dict[str, Any]]) -> EnvironmentReview:
    """The review with each changed KubeRay object's Pod-level consequences added to its labels; `before` and
    `after`: the objects of golden/ and of the render as the API server stores them (the render's CRDs)."""
    version = render.chart.version
    changed = [o for o in review.objects if o.status == "changed" and o.key.kind in KINDS]
    if not changed or not binary.binary_for(version).is_file():
        return review
    olds = {key_of(d): d for d in before if isinstance(d, dict) and d.get("metadata")}
    news = {key_of(d): d for d in after if isinstance(d, dict) and d.get("metadata")}
    pairs = [(o, olds[o.key], news[o.key]) for o in changed if o.key in olds and o.key in news]
    if not pairs:
        return review
    operator = kuberay.operator_config([o.document for o in render.chart_objects])
    # two requests, the same order: the random name suffixes KubeRay draws come out the same for old and new
    old_answers = kuberay.build(version, operator, [as_stored(old) for _, old, _ in pairs])
    new_answers = kuberay.build(version, operator, [as_stored(new) for _, _, new in pairs])
    extra = {change.key: _labels(change.key.kind, new, old_answer, new_answer)
             for (change, _, new), old_answer, new_answer in zip(pairs, old_answers, new_answers, strict=True)}
    objects = tuple(dataclasses.replace(o, labels=(*o.labels, *extra[o.key])) if extra.get(o.key) else o
                    for o in review.objects)
    return dataclasses.replace(review, objects=objects)
