"""The review of a render against golden, as records every formatter reads."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..diagnostics.problems import Problem
from ..k8s.objects import ObjectKey
from .capacity import Capacity
from .crdgate import CrdGate
from .fielddiff import FieldChange
from .grouping import ChangeGroup
from .labels import Label, worst_rank
from .pictures import AcceleratorGpus, SyncApp
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
    summary: str = ""  # added or removed: kind, name, capacity at max, deadlines (review/summaries.py)

    @property
    def api_version(self) -> str:
        return self.new_api_version or self.old_api_version

    @property
    def rank(self) -> int:
        """Its worst consequence (labels.IMPACTS index); objects without one come last."""
        return worst_rank(self.labels)


@dataclass(frozen=True)
class FileChange:
    """A golden file that is not an object: the operator's Helm values, the CRD lock, anything else."""

    path: str
    status: Status
    diff: tuple[str, ...]  # unified diff lines of the text
    labels: tuple[Label, ...] = ()


@dataclass(frozen=True)
class LimitCheck:
    """Capacity at max against a limit a policy states (`39 / 32 ✗`)."""

    policy: str  # policy/<file stem>
    resource: str  # gpu
    maximum: int
    value: int

    @property
    def ok(self) -> bool:
        return self.value <= self.maximum

    def text(self) -> str:
        return f"{self.value} / {self.maximum} {'✓' if self.ok else '✗'}"

    def as_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "resource": self.resource, "limit": self.maximum, "value": self.value,
                "ok": self.ok}


def check_identity(problem: Problem) -> tuple[str, str, str, str]:
    """A finding as the base and the change are matched by: its rule, severity, object and words; not its line,
    which moves with every edit above it."""
    return (problem.rule, problem.severity, problem.object, problem.message)


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
    removed: bool = False  # the environment file is gone: everything in golden/<env>/ would be pruned
    groups: tuple[ChangeGroup, ...] = ()  # the same change in several places, said once
    checks: tuple[Problem, ...] = ()  # lint and policy findings of the environment, errors first
    limits: tuple[LimitCheck, ...] = ()  # capacity at max against the limits policies state
    ray_view: TwoViews | None = None  # capacity after, as Ray's autoscaler sees it beside Kubernetes (ray_view.py)
    new_checks: tuple[Problem, ...] = ()  # lint and policy findings the base did not have (Review.checks_base)
    resolved_checks: tuple[Problem, ...] = ()  # findings the base had that are gone
    sync: tuple[SyncApp, ...] = ()  # the Argo CD Applications after the change, in sync order (pictures.py)
    accelerators: tuple[AcceleratorGpus, ...] = ()  # GPUs at max per accelerator, before and after

    @property
    def new_errors(self) -> int:
        return sum(p.severity == "error" for p in self.new_checks)

    @property
    def changed(self) -> bool:
        # a new error is a change like any other: `krc golden` would refuse it (a new warning is shown, not a change)
        return bool(self.removed or self.objects or self.files or self.gate or self.new_errors)

    @property
    def check_errors(self) -> int:
        return sum(p.severity == "error" for p in self.checks)

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.objects)


@dataclass(frozen=True)
class Review:
    base: str  # what golden was read from, for people
    ref: str | None  # the git ref of --base, None for the working tree
    environments: tuple[EnvironmentReview, ...]
    checks_base: str = ""  # what the checks were compared with ("HEAD (0123456789ab)"), "" when they were not
    checks_note: str = ""  # why they were not, when they were not

    @property
    def new_checks(self) -> tuple[tuple[str, Problem], ...]:
        return tuple((e.name, p) for e in self.environments for p in e.new_checks)

    @property
    def resolved_checks(self) -> tuple[tuple[str, Problem], ...]:
        return tuple((e.name, p) for e in self.environments for p in e.resolved_checks)

    @property
    def changed(self) -> bool:
        return any(e.changed for e in self.environments)

    @property
    def removed(self) -> tuple[str, ...]:
        """Environments whose file is gone while golden/ still has them."""
        return tuple(e.name for e in self.environments if e.removed)

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
