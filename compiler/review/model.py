"""The review of a render against golden, as records every formatter reads."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..k8s.objects import ObjectKey
from .capacity import Capacity
from .consequences import Label
from .crdgate import CrdGate
from .fielddiff import FieldChange
from .ray_view import TwoViews

Status = Literal["added", "removed", "changed"]
STATUS_MARK = {"added": "+", "removed": "-", "changed": "~"}


@dataclass(frozen=True)
class ObjectChange:
    key: ObjectKey
    status: Status
    old_api_version: str  # "" when added
    new_api_version: str  # "" when removed
    file: str  # the manifest file, relative to golden/<env>/ (the new name when both exist)
    fields: tuple[FieldChange, ...]  # changed objects only
    labels: tuple[Label, ...]
    document: dict[str, Any] | None  # the whole object when added (new) or removed (old)

    @property
    def api_version(self) -> str:
        return self.new_api_version or self.old_api_version


@dataclass(frozen=True)
class FileChange:
    """A golden file that is not an object: the operator's Helm values, the CRD lock, anything else."""

    path: str
    status: Status
    diff: tuple[str, ...]  # unified diff lines of the text
    labels: tuple[Label, ...] = ()


@dataclass(frozen=True)
class EnvironmentReview:
    name: str
    first_render: bool  # golden has nothing for this environment yet
    objects: tuple[ObjectChange, ...]
    files: tuple[FileChange, ...]
    unchanged: int  # objects identical to golden
    capacity_before: Capacity
    capacity_after: Capacity
    upgrade_peak: Capacity | None  # after, plus the RayService clusters that are replaced, while both run
    gate: CrdGate | None
    ray_view: TwoViews | None = None  # capacity after, as Ray's autoscaler sees it beside Kubernetes (ray_view.py)

    @property
    def changed(self) -> bool:
        return bool(self.objects or self.files or self.gate)

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.objects)


@dataclass(frozen=True)
class Review:
    base: str  # what golden was read from, for people
    ref: str | None  # the git ref of --base, None for the working tree
    environments: tuple[EnvironmentReview, ...]

    @property
    def changed(self) -> bool:
        return any(e.changed for e in self.environments)

    @property
    def gates(self) -> tuple[CrdGate, ...]:
        return tuple(e.gate for e in self.environments if e.gate)

    @property
    def unapproved(self) -> tuple[CrdGate, ...]:
        """Gates whose breaking changes need an approval they do not have."""
        return tuple(g for g in self.gates if g.blocking and g.approval.status != "approved")

    @property
    def exit_code(self) -> int:
        return 1 if self.changed else 0
