"""What a job is asked to do, as a typed plan per command, and the record each plan gives back per environment.

A plan carries only its own settings (a render's up-to-date keys, a review's golden files at a git ref, a lint's
engine and flags); the executor (jobs.run_job) dispatches on the plan's type, and each plan's `record` says which
result record its environments come back as. The records share what every command keeps of an environment
(EnvironmentResult) and add what only their command needs: never the whole render, so memory stays flat as N grows.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from ..diagnostics.problems import Problem
from ..k8s.destinations import Destination
from ..output import folders
from .work import Work

if TYPE_CHECKING:  # the review stage is imported by the commands that review, not by render or check
    from ..policy import CueEngine
    from ..review import EnvironmentReview


@dataclass(frozen=True)
class EnvironmentResult:
    """What every command keeps of one environment."""

    name: str
    key: str = ""  # Compiled.result_key (what rendered/<env>/ is stamped with)
    chart: tuple[str, str] = ("", "")
    objects: int = 0
    findings: tuple[Problem, ...] = ()
    compiled: bool = False  # compiled in this run (False: taken from the cache)


@dataclass(frozen=True, kw_only=True)
class Written(EnvironmentResult):
    """`krc render` and `krc golden`: the folder staged beside its target, not yet swapped in (None: the target
    already holds exactly this render and is left as it is)."""

    crds: int  # the pinned chart's CRDs
    staged: Path | None = None


@dataclass(frozen=True)
class GoldenMismatch:
    environment: str
    changed: tuple[str, ...]
    added: tuple[str, ...]  # rendered but not in golden
    removed: tuple[str, ...]  # in golden but no longer rendered
    orphaned: bool = False  # golden/<env>/ of an environment whose file is gone
    pruned: tuple[str, ...] = ()  # what deleting the removed objects does, one line per object

    @property
    def clean(self) -> bool:
        return not (self.changed or self.added or self.removed)


@dataclass(frozen=True, kw_only=True)
class Checked(EnvironmentResult):
    """`krc check`: the render against golden/<env>/."""

    mismatch: GoldenMismatch


@dataclass(frozen=True, kw_only=True)
class Reviewed(EnvironmentResult):
    """`krc diff`: the environment's review against its base."""

    review: EnvironmentReview


@dataclass(frozen=True, kw_only=True)
class Linted(EnvironmentResult):
    """`krc lint` and `krc policy`: findings and policy results (`findings`); `policies_pending`: its policies are
    still to run, by the main process at the end of the run (LintPlan.defer_policies)."""

    policies_pending: bool = False


@dataclass(frozen=True)
class RenderPlan:
    """rendered/<env>/, with the chart's CRDs; `up_to_date`: the keys rendered/<env>/ already holds, untouched
    since (those folders are left as they are)."""

    work: ClassVar[Work] = Work.RENDER
    record: ClassVar[type[EnvironmentResult]] = Written
    up_to_date: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class AcceptPlan:
    """golden/<env>/ becomes the render (a golden/<env>/ that already holds it is left as it is)."""

    work: ClassVar[Work] = Work.GOLDEN
    record: ClassVar[type[EnvironmentResult]] = Written


@dataclass(frozen=True)
class CheckPlan:
    """The render compared with golden/<env>/."""

    work: ClassVar[Work] = Work.CHECK
    record: ClassVar[type[EnvironmentResult]] = Checked


@dataclass(frozen=True)
class ReviewPlan:
    """`krc diff`: each environment's review; `golden`: golden/'s files as committed at --base, by environment
    (None: the working tree's golden/)."""

    work: ClassVar[Work] = Work.REVIEW
    record: ClassVar[type[EnvironmentResult]] = Reviewed
    golden: Mapping[str, folders.Files] | None = None


@dataclass(frozen=True)
class LintPlan:
    """`krc lint` and `krc policy`: schema and rule findings (`findings`), the policies in `engine` (None: no
    policies to run), the environments' `lint.rules` settings for policies (`policy_settings`); `defer_policies`:
    engine runs wait for the end of the run (policies_after); `argocd_crds`: the Argo CD CRDs the command names."""

    work: ClassVar[Work] = Work.LINT
    record: ClassVar[type[EnvironmentResult]] = Linted
    findings: bool = True
    engine: CueEngine | None = None
    policy_settings: bool = True
    defer_policies: bool = False
    argocd_crds: str | None = None


Plan = RenderPlan | AcceptPlan | CheckPlan | ReviewPlan | LintPlan


@dataclass(frozen=True)
class Job:
    """One plan over a batch of environments, for this process or a worker: picklable, it names its project."""

    plan: Plan
    root: Path
    names: tuple[str, ...]
    cache: bool
    shared: str  # the cache's shared digest, as the main process computed it
    options: str = ""  # the cache's options string
    peers: tuple[Destination, ...] | None = None  # where every environment deploys (set when sent to a worker)

    @property
    def work(self) -> Work:
        return self.plan.work


@dataclass(frozen=True)
class Outcome:
    results: tuple[EnvironmentResult, ...] = ()
    problems: tuple[Problem, ...] = ()
    compiled: tuple[str, ...] = ()  # the environments this job compiled (the others came from the cache)
