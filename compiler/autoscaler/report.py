"""`krc autoscaler ENV...`: every node type as Ray's autoscaler sees it, as a table or JSON.

Per cluster spec: the generator's node types (head first) with min/max workers, logical CPU, GPU, memory and
custom resources per node, the idle timeout that applies, and beside them one Pod's figures in Kubernetes' view;
then why the two views differ. Deterministic: same input, same bytes.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from ..review.capacity import format_cpu, format_memory
from ..review.ray_view import ClusterRows, NodeRow

HEADERS = ("NODE TYPE", "MIN", "MAX", "CPU", "GPU", "MEMORY", "CUSTOM", "IDLE", "POD CPU", "POD GPU", "POD MEMORY")


class EnvironmentNodes(Protocol):
    """pipeline.AutoscalerNodes, as far as the report reads it."""

    @property
    def environment(self) -> str: ...

    @property
    def ray_version(self) -> str: ...

    @property
    def clusters(self) -> tuple[ClusterRows, ...]: ...


def _idle(row: NodeRow, cluster: ClusterRows) -> str:
    own = row.node_type.idle_timeout_s
    seconds = own if own is not None else cluster.config.idle_timeout_minutes * 60
    return "-" if row.node_type.is_head or not cluster.autoscaled else f"{seconds:g}s"


def _cells(row: NodeRow, cluster: ClusterRows) -> tuple[str, ...]:
    node = row.node_type
    custom = ",".join(f"{k}={v}" for k, v in sorted(node.custom.items())) or "-"
    return (node.name, str(node.min_workers), str(node.max_workers), str(node.amount("CPU")),
            str(node.amount("GPU")), format_memory(node.amount("memory")), custom, _idle(row, cluster),
            format_cpu(row.pod.cpu_millis), str(row.pod.gpus), format_memory(row.pod.memory_bytes))


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def format_text(environments: Sequence[EnvironmentNodes]) -> str:
    lines: list[str] = []
    for env in environments:
        lines.append(f"== {env.environment} (autoscaler config of Ray {env.ray_version})")
        if not env.clusters:
            lines.append("   no Ray clusters")
        for cluster in env.clusters:
            config = cluster.config
            scaling = (f"autoscaled, idle timeout {config.idle_timeout_minutes * 60:g}s" if cluster.autoscaled else
                       "not autoscaled (no autoscaler reads this config; Ray's view of its fixed size)")
            lines.append(f"{cluster.cluster}: {scaling}, max workers {config.max_workers}")
            if config.error:
                lines.append(f"   the generator fails: {config.error}")
                continue
            lines += ["   " + line for line in _table([HEADERS, *(_cells(r, cluster) for r in cluster.rows)])]
            lines += [f"   differs: {r.node_type.name}: {reason}" for r in cluster.rows for reason in r.reasons]
            lines += [f"   generator: {warning}" for warning in config.warnings]
    return "\n".join(lines) + "\n"


def as_dict(environments: Sequence[EnvironmentNodes]) -> dict[str, Any]:
    return {"format": "krc-autoscaler/1", "environments": [{
        "name": env.environment, "rayVersion": env.ray_version,
        "clusters": [{"cluster": c.cluster, "autoscaled": c.autoscaled, "error": c.config.error or None,
                      "warnings": list(c.config.warnings), "idleTimeoutMinutes": c.config.idle_timeout_minutes,
                      "maxWorkers": c.config.max_workers,
                      "nodeTypes": [r.as_dict() for r in c.rows]} for c in env.clusters]}
        for env in environments]}


def format_json(environments: Sequence[EnvironmentNodes]) -> str:
    return json.dumps(as_dict(environments), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
