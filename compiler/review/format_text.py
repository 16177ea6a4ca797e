"""`krc diff` for a terminal: the CRD gate first, then per environment its objects and fields."""
from __future__ import annotations

import json
from typing import Any

from .. import crddiff, yamlio
from .capacity import Capacity
from .crdgate import CrdGate, gate_statements
from .fielddiff import FieldChange
from .model import STATUS_MARK, EnvironmentReview, Review

BREAKING_SHOWN = 40  # breaking CRD items listed in the gate; `krc crd-diff` lists all


def inline(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))
    return json.dumps(value, ensure_ascii=False, default=str)


def capacity_line(before: Capacity, after: Capacity) -> str:
    parts = []
    for label, old, new in (("CPU", before.as_dict()["cpu"], after.as_dict()["cpu"]),
                            ("GPU", str(before.gpus), str(after.gpus)),
                            ("memory", before.as_dict()["memory"], after.as_dict()["memory"])):
        parts.append(f"{label} {old}" if old == new else f"{label} {old} -> {new}")
    return ", ".join(parts)


def approval_lines(gate: CrdGate) -> list[str]:
    approval = gate.approval
    if approval.status == "not-required":
        return ["No breaking CRD change: no approval needed."]
    if approval.status == "approved":
        return [f"Breaking CRD upgrade approved by {approval.file}."]
    lines = [f"NOT APPROVED ({'; '.join(gate.blocking)}): {approval.status} {approval.file}"]
    lines += [f"  - {p}" for p in approval.problems]
    lines.append(f"After review, commit {approval.file} with a reason:")
    lines += ["    " + line for line in approval.template.rstrip("\n").splitlines()]
    return lines


def gate_lines(gate: CrdGate) -> list[str]:
    lines = [f"!! CRD UPGRADE GATE: {gate.environment}"]
    lines += [f"   {s}" for s in gate_statements(gate)]
    for status in gate.crds:
        if status.status != "unchanged":
            lines.append(f"   {status.status:<9} {status.name} ({status.kind})")
    lines.append(f"   crd-diff {gate.chart} {gate.old_version} -> {gate.new_version}: "
                 + (crddiff.summary_line(gate.changes) if gate.compared else f"not compared: {gate.unavailable}"))
    breaking = [c for c in gate.changes if c.severity == "breaking"]
    for change in breaking[:BREAKING_SHOWN]:
        where = " ".join(p for p in (change.version, change.path) if p)
        lines.append(f"     breaking {change.crd} {where}: {change.message} [{change.check}]".replace("  ", " "))
    if len(breaking) > BREAKING_SHOWN:
        lines.append(f"     ... {len(breaking) - BREAKING_SHOWN} more: krc crd-diff "
                     f"{gate.chart}@{gate.old_version} {gate.chart}@{gate.new_version}")
    lines += [f"   note: {n}" for n in gate.notes]
    lines.append(f"   Golden objects under the new CRDs: {len(gate.golden_under_new) or 'all valid'}")
    lines += [f"     {f.severity} {f.object} {f.path}: {f.message}" for f in gate.golden_under_new]
    lines.append("   New objects under the old CRDs (live until the CRDs are applied): "
                 + (f"{len(gate.rendered_under_old) or 'all valid'}" if gate.compared
                    else f"not checked: {gate.unavailable}"))
    for f in gate.rendered_under_old:
        what = f"field {f.path} of {f.object} would be PRUNED silently" if f.pruned else f"{f.object} {f.path}"
        lines.append(f"     {f.severity} {what}: {f.message}")
    lines += ["   " + line for line in approval_lines(gate)]
    return lines


def field_lines(change: FieldChange, indent: str) -> list[str]:
    if change.op == "text":
        return [f"{indent}{change.path}: (text)"] + [f"{indent}  {line}" for line in change.diff]
    if change.op in ("added", "removed") and isinstance(change.old if change.op == "removed" else change.new,
                                                       (dict, list)):
        value = change.new if change.op == "added" else change.old
        mark = "+" if change.op == "added" else "-"
        block = yamlio.dump(value).rstrip("\n").splitlines()
        return [f"{indent}{change.path}: {change.op}"] + [f"{indent}  {mark} {line}" for line in block]
    if change.op == "added":
        return [f"{indent}{change.path}: (absent) -> {inline(change.new)}"]
    if change.op == "removed":
        return [f"{indent}{change.path}: {inline(change.old)} -> (absent)"]
    if change.op == "reordered":
        return [f"{indent}{change.path}: order {inline(change.old)} -> {inline(change.new)}"]
    return [f"{indent}{change.path}: {inline(change.old)} -> {inline(change.new)}"]


def environment_lines(env: EnvironmentReview) -> list[str]:
    head = (f"== {env.name}: {env.count('added')} added, {env.count('removed')} removed, {env.count('changed')} "
            f"changed, {env.unchanged} unchanged" + (" (first render: golden has nothing)" if env.first_render else ""))
    lines = [head, f"   capacity at max scale: {capacity_line(env.capacity_before, env.capacity_after)}"]
    if env.upgrade_peak:
        lines.append(f"   during the RayService upgrade (old and new cluster both up): "
                     f"{capacity_line(env.capacity_after, env.upgrade_peak)}")
    if env.ray_view is not None:
        lines += [f"   {line}" for line in env.ray_view.lines()]
    for obj in env.objects:
        version = obj.api_version
        lines.append(f"{STATUS_MARK[obj.status]} {obj.key.ref} ({version}) {obj.status}")
        lines += [f"    [{label.code}] {label.message}" for label in obj.labels]
        for change in obj.fields:
            lines += field_lines(change, "    ")
    for file in env.files:
        lines.append(f"{STATUS_MARK[file.status]} file {file.path} {file.status}")
        lines += [f"    [{label.code}] {label.message}" for label in file.labels]
        lines += [f"    {line}" for line in file.diff]
    return lines


def format_text(review: Review) -> str:
    lines = [f"krc diff: render compared with {review.base}"]
    for gate in review.gates:
        lines += gate_lines(gate)
    for env in review.environments:
        if env.changed:
            lines += environment_lines(env)
        else:
            lines.append(f"== {env.name}: no change ({env.unchanged} objects)")
    changed = sum(e.changed for e in review.environments)
    lines.append(f"{changed} of {len(review.environments)} environments changed"
                 + (f"; {len(review.gates)} CRD upgrade gates" if review.gates else ""))
    return "\n".join(lines) + "\n"
