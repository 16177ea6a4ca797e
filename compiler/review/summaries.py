"""One line per added or removed object: what it is and what it costs (capacity at max, deadlines for jobs)."""
from __future__ import annotations

from typing import Any

from ..k8s.objects import key_of
from .capacity import Capacity, format_cpu, format_memory, object_capacity


def duration(seconds: Any) -> str:
    """14400 -> 4h, 5400 -> 1h30m, 90 -> 1m30s."""
    if not isinstance(seconds, int) or isinstance(seconds, bool) or seconds < 0:
        return str(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = "".join(f"{n}{unit}" for n, unit in ((hours, "h"), (minutes, "m"), (secs, "s")) if n)
    return text or "0s"


def capacity_words(capacity: Capacity) -> str:
    return (f"{format_cpu(capacity.cpu_millis)} CPU, {capacity.gpus} GPU, {format_memory(capacity.memory_bytes)} "
            "memory at max")


def _get(document: Any, *path: str) -> Any:
    for step in path:
        document = document.get(step) if isinstance(document, dict) else None
    return document


def _job_deadlines(spec: Any) -> str:
    active, pre = _get(spec, "activeDeadlineSeconds"), _get(spec, "preRunningDeadlineSeconds")
    parts = [f"deadline {duration(active)}" if active is not None else "no deadline (runs until it ends)"]
    if pre is not None:
        parts.append(f"{duration(pre)} to start")
    return ", ".join(parts)


def object_summary(document: dict[str, Any]) -> str:
    """E.g. `RayJob ray-prod/train-resnet: 16 CPU, 2 GPU, 64Gi memory at max; deadline 4h, 30m to start`."""
    ref = key_of(document).ref
    kind, spec = document.get("kind"), document.get("spec")
    details: list[str] = []
    capacity = object_capacity(document)
    if capacity != Capacity():
        details.append(capacity_words(capacity))
    if kind == "RayJob":
        details.append(_job_deadlines(spec))
    elif kind == "RayCronJob":
        details.append(f"schedule '{_get(spec, 'schedule')}'; each run: {_job_deadlines(_get(spec, 'jobTemplate'))}")
    elif kind == "RayService":
        details.append(f"upgrades by {_get(spec, 'upgradeStrategy', 'type') or 'NewCluster'}")
    elif kind == "Application":
        destination = _get(spec, "destination") or {}
        cluster = destination.get("name") or destination.get("server") or "?"
        details.append(f"deploys to {cluster}" + (f" namespace {destination['namespace']}"
                                                  if destination.get("namespace") else ""))
    return f"{ref}: {'; '.join(details)}" if details else ref
