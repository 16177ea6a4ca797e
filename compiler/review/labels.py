"""A consequence of a change as a label: a stable code (for tools), a message in plain words, and its impact.

Impacts are ranked, worst first (IMPACTS): reports sort consequences by them and name them in plain words; the
codes stay in the JSON report.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# worst first: the order reports rank consequences in; "permissions": what the operator may do in the cluster
# changes (RBAC rules gained or lost, or who holds them), which a reviewer must see before a rescale
IMPACTS = ("outage", "replacement", "restart", "permissions", "scale", "metadata only")
# the impact of a label code when the label does not say otherwise
CODE_IMPACT = {
    "deleted": "outage", "rayservice-new-cluster": "replacement", "namespace": "replacement",
    "worker-group-removed": "restart", "operator-values": "restart", "rayservice-serve-in-place": "restart",
    "head-pod-template": "restart", "worker-pod-template": "restart",
    "rayservice-scale": "scale", "rayservice-groups-appended": "scale", "worker-group-added": "scale",
    "api-version": "metadata only", "rayservice-settings": "metadata only", "rayservice-not-upgraded": "metadata only",
    # the operator chart's objects (review/operator_changes.py)
    "operator-restart": "restart", "rbac": "permissions", "rbac-binding": "permissions",
    "service": "restart", "service-account": "restart",
}


@dataclass(frozen=True)
class Label:
    code: str
    message: str
    impact: str = ""  # one of IMPACTS; "" takes the code's default (CODE_IMPACT)

    @property
    def severity(self) -> str:
        return self.impact or CODE_IMPACT.get(self.code, "metadata only")

    @property
    def rank(self) -> int:
        return IMPACTS.index(self.severity)

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "impact": self.severity, "message": self.message}


def ranked(labels: Sequence[Label]) -> tuple[Label, ...]:
    """Worst impact first; the order within one impact is kept."""
    return tuple(sorted(labels, key=lambda label: label.rank))


def worst_rank(labels: Sequence[Label]) -> int:
    return min((label.rank for label in labels), default=len(IMPACTS))
