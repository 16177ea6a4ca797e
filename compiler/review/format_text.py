"""`krc diff` for a terminal: the CRD gate first, then per environment its objects and fields."""
from __future__ import annotations

import json
from typing import Any

from .. import crddiff
from ..diagnostics.problems import Problem, safe_text
from .capacity import Capacity
from .crdgate import CrdGate, gate_statements
from .fielddiff import FieldChange
from .grouping import ChangeGroup, group_crd_changes, grouped_places
from .model import STATUS_MARK, EnvironmentReview, LimitCheck, Review
from .showing import around_difference, yaml_lines

TEXT_CHARS = 400  # a changed string longer than this is shown around its first difference
BREAKING_SHOWN = 40  # breaking CRD items listed in the gate; `krc crd-diff` lists all


def inline(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))
    return json.dumps(value, ensure_ascii=False, default=str)


def limit_words(limits: tuple[LimitCheck, ...], resource: str) -> str:
    """` / 32 ✗ (policy/prod-gpu-limit)` for the tightest limit on `resource`; "" without one."""
    found = sorted((lim for lim in limits if lim.resource == resource), key=lambda lim: lim.maximum)
    if not found:
        return ""
    tightest = found[0]
    return f" / {tightest.maximum} {'✓' if tightest.ok else '✗'} ({tightest.policy})"


def capacity_line(before: Capacity, after: Capacity, limits: tuple[LimitCheck, ...] = ()) -> str:
    parts = []
    for label, old, new in (("CPU", before.as_dict()["cpu"], after.as_dict()["cpu"]),
                            ("GPU", str(before.gpus), str(after.gpus)),
                            ("memory", before.as_dict()["memory"], after.as_dict()["memory"])):
        text = f"{label} {old}" if old == new else f"{label} {old} -> {new}"
        parts.append(text + (limit_words(limits, "gpu") if label == "GPU" else ""))
    return ", ".join(parts)


def group_words(group: ChangeGroup) -> str:
    return (f"{group.field} {inline(group.old)} -> {inline(group.new)} in {group.objects} object"
            f"{'s' * (group.objects != 1)} ({len(group.places)} {group.unit})")


def check_line(problem: Problem) -> str:
    return problem.one_line()


def checks_lines(env: EnvironmentReview) -> list[str]:
    if not env.checks:
        return []
    counts = {s: sum(p.severity == s for p in env.checks) for s in ("error", "warning", "info")}
    lines = [f"   checks: {counts['error']} errors, {counts['warning']} warnings, {counts['info']} infos"
             + (" (errors block 'krc golden')" if counts["error"] else "")]
    return lines + [f"     {check_line(p)}" for p in env.checks]


def approval_lines(gate: CrdGate) -> list[str]:
    approval = gate.approval
    if approval.status == "not-required":
        return ["No breaking CRD change: no approval needed."]
    if approval.status == "approved":
        return [f"Breaking CRD upgrade approved by {approval.file}."]
    lines = [f"NOT APPROVED ({'; '.join(gate.blocking)}): {approval.status} {approval.file}"]
    lines += [f"  - {p}" for p in approval.problems]
    lines.append(f"After review, run 'krc approve {gate.environment} --reason \"...\"' (with --base once golden/ "
                 f"moved) and commit {approval.file}; it writes:")
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
    groups = group_crd_changes(c for c in gate.changes if c.severity == "breaking")
    for group in groups[:BREAKING_SHOWN]:
        where = f" in {len(group.places)} places" if len(group.places) > 1 else ""
        lines.append(f"     breaking {group.field}{where}: {group.message} [{group.check}]")
        lines.append(f"       at {'; '.join(group.places)}")
    if len(groups) > BREAKING_SHOWN:
        lines.append(f"     ... {len(groups) - BREAKING_SHOWN} more: krc crd-diff "
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
        block = yaml_lines(value)
        return [f"{indent}{change.path}: {change.op}"] + [f"{indent}  {mark} {line}" for line in block]
    if change.op == "added":
        return [f"{indent}{change.path}: (absent) -> {inline(change.new)}"]
    if change.op == "removed":
        return [f"{indent}{change.path}: {inline(change.old)} -> (absent)"]
    if change.op == "reordered":
        return [f"{indent}{change.path}: order {inline(change.old)} -> {inline(change.new)}"]
    old, new = change.old, change.new
    if isinstance(old, str) and isinstance(new, str):
        old, new = around_difference(old, new, TEXT_CHARS)
    return [f"{indent}{change.path}: {inline(old)} -> {inline(new)}"]


def removed_words(env: EnvironmentReview) -> str:
    return (f"ENVIRONMENT REMOVED: environments/{env.name}.yaml is gone and golden/ still has it; deploying "
            f"this prunes all {env.count('removed')} objects")


def environment_lines(env: EnvironmentReview) -> list[str]:
    head = (f"== {env.name}: {env.count('added')} added, {env.count('removed')} removed, {env.count('changed')} "
            f"changed, {env.unchanged} unchanged" + (" (first render: golden has nothing)" if env.first_render else ""))
    lines = [f"== {env.name}: {removed_words(env)}" if env.removed else head,
             f"   capacity at max scale: {capacity_line(env.capacity_before, env.capacity_after, env.limits)}"]
    if env.upgrade_peak:
        lines.append(f"   during the RayService upgrade (old and new cluster both up): "
                     f"{capacity_line(env.capacity_after, env.upgrade_peak)}")
    if env.ray_view is not None:
        lines += [f"   {line}" for line in env.ray_view.lines()]
    lines += checks_lines(env)
    if env.groups:
        lines.append("   the same change in several places:")
        lines += [f"     {group_words(group)}" for group in env.groups]
    grouped = grouped_places(env.groups)
    for obj in env.objects:
        version = obj.api_version
        summary = f": {obj.summary.split(': ', 1)[1]}" if ": " in obj.summary else ""
        lines.append(f"{STATUS_MARK[obj.status]} {obj.key.ref} ({version}) {obj.status}{summary}")
        lines += [f"    [{label.severity}] {label.message}" for label in obj.labels]
        shown = [change for change in obj.fields if (obj.key.ref, change.path) not in grouped]
        for change in shown:
            lines += field_lines(change, "    ")
        if len(shown) < len(obj.fields):
            lines.append(f"    ({len(obj.fields) - len(shown)} more changes: in the groups above)")
    for file in env.files:
        lines.append(f"{STATUS_MARK[file.status]} file {file.path} {file.status}")
        lines += [f"    [{label.severity}] {label.message}" for label in file.labels]
        lines += [f"    {line}" for line in file.diff]
    return lines


def check_change_lines(review: Review) -> list[str]:
    """New and resolved findings against the base's (right after the CRD gates: a new error blocks too)."""
    if not review.checks_base:
        return [f"checks: {review.checks_note}"] if review.checks_note else []
    new, resolved = review.new_checks, review.resolved_checks
    errors = sum(p.severity == "error" for _, p in new)
    lines = [f"checks against {review.checks_base}: {len(new)} new ({errors} error{'s' * (errors != 1)}), "
             f"{len(resolved)} resolved" + (" (new errors block 'krc golden')" if errors else "")]
    lines += [f"   new      {env}: {check_line(p)}" for env, p in new]
    lines += [f"   resolved {env}: {check_line(p)}" for env, p in resolved]
    return lines


def format_text(review: Review) -> str:
    lines = [f"krc diff: render compared with {review.base}"]
    for gate in review.gates:
        lines += gate_lines(gate)
    lines += check_change_lines(review)
    for env in review.environments:
        if env.changed:
            lines += environment_lines(env)
        else:
            lines.append(f"== {env.name}: no change ({env.unchanged} objects)")
    changed = sum(e.changed for e in review.environments)
    errors = sum(e.check_errors for e in review.environments)
    lines.append(f"{changed} of {len(review.environments)} environments changed"
                 + (f" ({len(review.removed)} removed: {', '.join(review.removed)})" if review.removed else "")
                 + (f"; {len(review.gates)} CRD upgrade gates" if review.gates else "")
                 + (f"; {errors} error-level checks" if errors else ""))
    # user values (names, keys, file names, diff lines) reach a terminal: their control characters escaped, once
    return safe_text("\n".join(lines) + "\n", lines=True)
