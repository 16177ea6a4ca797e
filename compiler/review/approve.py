"""`krc approve ENV --reason TEXT`: the approval file for the environment's current CRD change, written for the
reviewer instead of copied out of the report."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..diagnostics.problems import KrcError
from ..documents import yamlio
from ..output import folders
from .approval import approval_file, check_reason
from .crdgate import CrdGate


@dataclass(frozen=True)
class ApprovalWritten:
    file: str  # relative to the project root
    from_version: str
    to_version: str
    blocking: tuple[str, ...]  # what it approves


def write_approval(project_root: Path, gate: CrdGate | None, environment: str, reason: str,
                   compared_with: str) -> ApprovalWritten:
    """approvals/<env>.crd-upgrade.yaml for the gate's change, with `reason`; KrcError when there is nothing to
    approve."""
    check_reason(reason)
    if gate is None:
        raise KrcError(f"{environment} has no CRD change against {compared_with}: nothing to approve (a PR that "
                       "already ran 'krc golden' needs --base, e.g. --base origin/main)")
    if not gate.blocking:
        raise KrcError(f"{environment}'s CRD change {gate.old_version} -> {gate.new_version} has no breaking change: "
                       "it needs no approval")
    expected = yamlio.load(gate.approval.template, "approval template")
    expected["reason"] = reason.strip()
    relative = approval_file(environment)
    folders.replace_file(project_root / relative,
                        ("# Approves one CRD upgrade; krc diff checks every field but reason against the change.\n"
                         + yamlio.dump(expected)).encode("utf-8"))
    return ApprovalWritten(relative, gate.old_version, gate.new_version, gate.blocking)
