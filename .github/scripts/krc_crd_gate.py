#!/usr/bin/env python3
"""Fail the check when a breaking CRD upgrade lacks an explicit approval.

    krc_crd_gate.py krc-review.json

Reads `krc diff --base ... --format json`. For every environment whose CRD gate has blocking reasons (breaking
CRD changes, removed CRDs, golden objects invalid under the new CRDs, an incomplete comparison), the upgrade must
be approved either by a committed `approvals/<env>.crd-upgrade.yaml` that `krc diff` found matching the change
(the preferred way: it names the chart versions and CRD digests, and is reviewed with the pull request), or by the
pull-request label `crd-upgrade-approved` (read from GITHUB_EVENT_PATH; a coarser, unversioned override).
Exit 0 when nothing needs approval or all is approved, 1 otherwise, 2 when the report cannot be read.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

APPROVAL_LABEL = "crd-upgrade-approved"


def pull_request_labels() -> set[str]:
    event_path = os.environ.get("GITHUB_EVENT_PATH")
    if not event_path or not Path(event_path).is_file():
        return set()
    event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    return {str(label.get("name")) for label in (event.get("pull_request") or {}).get("labels") or []}


def unapproved(report: dict) -> list[tuple[str, dict]]:
    gates = [(env["name"], env["crdGate"]) for env in report.get("environments", []) if env.get("crdGate")]
    return [(name, gate) for name, gate in gates if gate["blocking"] and gate["approval"]["status"] != "approved"]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: krc_crd_gate.py REPORT.json", file=sys.stderr)
        return 2
    try:
        report = json.loads(Path(args[0]).read_text(encoding="utf-8"))
        found = report.get("format") if isinstance(report, dict) else type(report).__name__
        if found != "krc-diff/1":
            raise ValueError(f"format is {found!r}, expected 'krc-diff/1' (krc diff --format json)")
    except (OSError, ValueError) as err:
        print(f"::error::cannot read the krc diff report {args[0]}: {err}")
        return 2
    missing = unapproved(report)
    if not missing:
        print("CRD gate: no unapproved breaking CRD upgrade")
        return 0
    if APPROVAL_LABEL in pull_request_labels():
        for name, gate in missing:
            print(f"::warning::{name}: CRD upgrade {gate['oldVersion']} -> {gate['newVersion']} approved by the "
                  f"'{APPROVAL_LABEL}' label ({'; '.join(gate['blocking'])})")
        return 0
    for name, gate in missing:
        problems = "; ".join(gate["approval"]["problems"])
        print(f"::error::{name}: breaking CRD upgrade {gate['chart']} {gate['oldVersion']} -> {gate['newVersion']} "
              f"({'; '.join(gate['blocking'])}) is not approved: {problems}. After review, run "
              f"'krc approve {name} --base <base branch> --reason ...' and commit {gate['approval']['file']}, or "
              f"have a maintainer add the label '{APPROVAL_LABEL}'.")
    return 1


if __name__ == "__main__":
    sys.exit(main())
