"""The explicit approval of a breaking CRD upgrade: a committed file that names exactly the change it approves.

`approvals/<env>.crd-upgrade.yaml` (beside environments/, reviewed like any other change of the pull request):

    environment: prod-eks-gpu
    chart: kuberay-operator
    fromVersion: 1.6.2          # the chart version of the base golden crds.lock.yaml
    toVersion: 1.7.0            # the chart version now rendered
    crds:                       # every CRD of the new chart, by name, with the sha256 of the new crds.lock.yaml
      rayclusters.ray.io: 7f3c...
    removed: []                 # CRDs the new chart no longer ships
    reason: why the breaking changes are safe, and how the CRDs are applied before the operator upgrade

`krc diff` checks it (offline, so tests and CI agree): any other chart version or CRD digest makes it a mismatch,
so an approval cannot silently carry over to a later, different CRD change. `krc approve ENV --reason TEXT` writes
the file for the current change (the gate also prints it).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..diagnostics.problems import KrcError
from ..documents import yamlio
from ..project.paths import decode_text, read_confined
from ..settings import limits

APPROVALS_DIR = "approvals"
PLACEHOLDER_REASON = "TODO: why the breaking CRD changes are safe, and how the CRDs are applied first"
ApprovalStatus = Literal["not-required", "approved", "missing", "mismatch"]


@dataclass(frozen=True)
class Approval:
    status: ApprovalStatus
    file: str  # relative to the project root
    problems: tuple[str, ...] = ()
    template: str = ""  # the approval file that would match, to commit after review

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "file": self.file, "problems": list(self.problems), "template": self.template}


def approval_file(environment: str) -> str:
    return f"{APPROVALS_DIR}/{environment}.crd-upgrade.yaml"


def expected_approval(environment: str, chart: str, from_version: str, to_version: str,
                      new_crds: dict[str, str], removed: list[str]) -> dict[str, Any]:
    return {"environment": environment, "chart": chart, "fromVersion": from_version, "toVersion": to_version,
            "crds": dict(sorted(new_crds.items())), "removed": sorted(removed), "reason": PLACEHOLDER_REASON}


def _template(expected: dict[str, Any]) -> str:
    return ("# Approves one CRD upgrade; krc diff checks every field but reason against the change.\n"
            + yamlio.dump(expected))


def _mismatches(found: Any, expected: dict[str, Any]) -> list[str]:
    if not isinstance(found, dict):
        return ["the file is not a YAML map"]
    problems = []
    for key in ("environment", "chart", "fromVersion", "toVersion"):
        if str(found.get(key, "")) != expected[key]:
            problems.append(f"{key} is {found.get(key)!r}, the change has {expected[key]!r}")
    raw_crds = found.get("crds")
    crds: dict[str, Any] = raw_crds if isinstance(raw_crds, dict) else {}
    for name, digest in expected["crds"].items():
        if str(crds.get(name, "")) != digest:
            problems.append(f"crds.{name} is {crds.get(name)!r}, the new chart's CRD has sha256 {digest}")
    for name in sorted(set(crds) - set(expected["crds"])):
        problems.append(f"crds.{name} is not a CRD of the new chart")
    removed = found.get("removed") or []
    if sorted(map(str, removed if isinstance(removed, list) else [removed])) != expected["removed"]:
        problems.append(f"removed is {removed!r}, the change removes {expected['removed']!r}")
    problem = reason_problem(str(found.get("reason") or ""))
    if problem:
        problems.append(f"reason {problem}")
    return problems


def reason_problem(reason: str) -> str:
    """What is wrong with an approval's reason, as the end of a sentence starting with the field name; ""."""
    text = reason.strip()
    if not text:
        return "is empty: say why the breaking changes are safe and how the CRDs are applied first"
    if text.upper().startswith("TODO"):
        return ("is still the placeholder (starts with TODO): replace it with why the breaking changes are safe "
                "and how the CRDs are applied first")
    return ""


def check_reason(reason: str) -> None:
    problem = reason_problem(reason)
    if problem:
        raise KrcError(f"--reason {problem}")


def check_approval(project_root: Path, expected: dict[str, Any], required: bool) -> Approval:
    relative = approval_file(expected["environment"])
    template = _template(expected)
    if not required:
        return Approval("not-required", relative, (), template)
    path = project_root / relative
    if not path.is_file():
        return Approval("missing", relative, (f"no {relative}",), template)
    try:
        text = decode_text(read_confined(path, project_root, limits.ENVIRONMENT_FILE_BYTES, relative), relative)
        found = yamlio.load(text, relative)
    except (KrcError, OSError, UnicodeDecodeError) as err:
        detail = err.problems[0].one_line() if isinstance(err, KrcError) else str(err)
        return Approval("mismatch", relative, (f"unreadable: {detail}",), template)
    problems = _mismatches(found, expected)
    return Approval("mismatch" if problems else "approved", relative, tuple(problems), template)
