"""`krc diff --format markdown`: a pull-request comment.

Order: the CRD gate sections first, then a summary table per environment, then a `<details>` block per object.
GitHub refuses comments over 65,536 characters; the report stays under `max_chars` (default MARKDOWN_BUDGET, which
leaves room for the marker and footer a workflow adds) by shortening details only: a block that does not fit is
cut inside (its diff closes cleanly and says how many lines were left out), later blocks are counted, never the
gate or the summary. What is cut points to the full text report, which the CI workflow puts in the job summary
and the `krc-review` artifact.
"""
from __future__ import annotations

import functools
import html
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from .. import crddiff, yamlio
from .crdgate import CrdGate, gate_statements
from .fielddiff import FieldChange
from .format_text import BREAKING_SHOWN, approval_lines
from .model import STATUS_MARK, EnvironmentReview, FileChange, ObjectChange, Review

COMMENT_LIMIT = 65_536  # GitHub's limit for an issue or pull-request comment
MARKDOWN_BUDGET = COMMENT_LIMIT - 1_536
FINDINGS_SHOWN = 30  # per list of schema findings in a gate
CELL_CHARS = 300
_MIN_PARTIAL = 800  # below this, a block is counted as left out rather than cut
_NOTICE_ROOM = 400  # kept free for the closing "left out" line of each environment
# where the uncut report is in CI (.github/workflows/krc-review.yml writes it: krc diff --format text)
FULL_REPORT = "or see the full report in the CI job summary or the `krc-review` artifact (krc-review.txt)"


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _code(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    if len(text) > CELL_CHARS:
        text = text[:CELL_CHARS] + "…"
    text = _cell(text)
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _fence(lines: list[str], language: str) -> tuple[str, str]:
    longest = max((len(line) - len(line.lstrip("`")) for line in lines), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n", f"{fence}\n"


def _findings(title: str, findings: list[Any], pruned_words: bool, env: str) -> list[str]:
    if not findings:
        return [f"- {title}: all valid\n"]
    out = [f"- {title}: {len(findings)} findings\n"]
    for f in findings[:FINDINGS_SHOWN]:
        lead = f"**pruned silently**: field `{f.path}` of `{f.object}`" if pruned_words and f.pruned else \
            f"{f.severity}: `{f.object}` `{f.path}`"
        out.append(f"  - {lead}: {_cell(f.message)}\n")
    if len(findings) > FINDINGS_SHOWN:
        out.append(f"  - … {len(findings) - FINDINGS_SHOWN} more: run `krc diff {env}`\n")
    return out


def gate_section(gate: CrdGate) -> str:
    out = [f"### :warning: CRD upgrade gate: `{gate.environment}` ({gate.chart} {gate.old_version} → "
           f"{gate.new_version})\n\n"]
    out += [f"- **{s}**\n" if i == 0 else f"- {s}\n" for i, s in enumerate(gate_statements(gate))]
    out.append("\n| CRD | Kind | Change |\n|---|---|---|\n")
    out += [f"| `{c.name}` | {c.kind} | {c.status} |\n" for c in gate.crds]
    result = crddiff.summary_line(gate.changes) if gate.compared else f"not compared: {gate.unavailable}"
    out.append(f"\n**crd-diff {gate.old_version} → {gate.new_version}: {_cell(result)}**\n\n")
    breaking = [c for c in gate.changes if c.severity == "breaking"]
    if breaking:
        out.append("<details><summary>Breaking CRD changes</summary>\n\n")
        for change in breaking[:BREAKING_SHOWN]:
            where = " ".join(p for p in (change.version, f"`{change.path}`" if change.path else "") if p)
            out.append(f"- `{change.crd}` {where}: {_cell(change.message)} [{change.check}]\n")
        if len(breaking) > BREAKING_SHOWN:
            out.append(f"- … {len(breaking) - BREAKING_SHOWN} more: `krc crd-diff {gate.chart}@{gate.old_version} "
                       f"{gate.chart}@{gate.new_version}`\n")
        out.append("\n</details>\n\n")
    out += [f"- note: {_cell(n)}\n" for n in gate.notes]
    out += _findings("Golden objects under the new CRDs", list(gate.golden_under_new), False, gate.environment)
    old_title = "New objects under the old CRDs (live until the CRDs are applied)"
    if gate.compared:
        out += _findings(old_title, list(gate.rendered_under_old), True, gate.environment)
    else:
        out.append(f"- {old_title}: **not checked**: {_cell(gate.unavailable)}\n")
    lines = approval_lines(gate)
    mark = ":white_check_mark:" if gate.approval.status in ("approved", "not-required") else ":x:"
    out.append(f"\n{mark} **{lines[0]}**\n")
    if gate.approval.status in ("missing", "mismatch"):
        out += [f"- {_cell(p)}\n" for p in gate.approval.problems]
        out.append(f"\nAfter review, commit `{gate.approval.file}` (fill in `reason`):\n\n```yaml\n"
                   f"{gate.approval.template}```\n")
    return "".join(out) + "\n"


def _capacity_cell(env: EnvironmentReview, part: str) -> str:
    before, after = env.capacity_before.as_dict()[part], env.capacity_after.as_dict()[part]
    text = str(after) if before == after else f"{before} → **{after}**"
    if env.upgrade_peak:
        text += f" (peak {env.upgrade_peak.as_dict()[part]})"
    return text


def summary_table(review: Review) -> str:
    out = ["### Summary\n\n| Environment | Added | Removed | Changed | Unchanged | CRDs | CPU at max | GPU at max "
           "| Memory at max | Consequences |\n|---|---|---|---|---|---|---|---|---|---|\n"]
    for env in review.environments:
        codes = Counter(label.code for o in env.objects for label in o.labels)
        codes.update(label.code for f in env.files for label in f.labels)
        consequences = ", ".join(f"{code} ×{n}" for code, n in sorted(codes.items())) or "none"
        crds = "unchanged" if env.gate is None else (
            f"**{env.gate.old_version} → {env.gate.new_version}**"
            + ("" if not env.gate.blocking else f" (approval {env.gate.approval.status})"))
        out.append(f"| `{env.name}` | {env.count('added')} | {env.count('removed')} | {env.count('changed')} | "
                   f"{env.unchanged} | {crds} | {_capacity_cell(env, 'cpu')} | {_capacity_cell(env, 'gpu')} | "
                   f"{_capacity_cell(env, 'memory')} | {consequences} |\n")
    peaks = [e.name for e in review.environments if e.upgrade_peak]
    if peaks:
        out.append("\n_peak: while a replaced RayService cluster and its new one both run ("
                   + ", ".join(peaks) + ")._\n")
    return "".join(out) + "\n"


class _Block:
    """One `<details>` block built piece by piece within a character limit."""

    def __init__(self, summary: str, limit: int):
        self.parts = [f"<details><summary>{summary}</summary>\n\n"]
        self.closing = "\n</details>\n\n"
        self.limit = limit
        self.size = len(self.parts[0]) + len(self.closing) + 300  # room for the "cut here" line
        self.cut = False

    def add(self, text: str) -> bool:
        if self.cut or self.size + len(text) > self.limit:
            self.cut = True
            return False
        self.parts.append(text)
        self.size += len(text)
        return True

    def add_code(self, lines: list[str], language: str) -> None:
        opening, closing = _fence(lines, language)
        if not self.add(opening):
            return
        self.size += len(closing)
        for index, line in enumerate(lines):
            if not self.add(line + "\n"):
                self.parts.append(f"… {len(lines) - index} more lines\n")
                break
        self.parts.append(closing)

    def text(self, env: str) -> str:
        note = f"\n_Cut to fit the comment: run `krc diff {env}` for the rest, {FULL_REPORT}._\n" if self.cut else ""
        return "".join(self.parts) + note + self.closing


def _field_rows(fields: list[FieldChange]) -> str:
    rows = ["| Field | Before | After |\n|---|---|---|\n"]
    for f in fields:
        before = "_(absent)_" if f.op == "added" else _code(f.old)
        after = "_(absent)_" if f.op == "removed" else _code(f.new)
        rows.append(f"| `{_cell(f.path)}`{' (order)' if f.op == 'reordered' else ''} | {before} | {after} |\n")
    return "".join(rows)


def object_block(obj: ObjectChange, env: str, limit: int) -> tuple[str, bool]:
    """The block and whether it is complete."""
    summary = f"{STATUS_MARK[obj.status]} <code>{html.escape(obj.key.ref)}</code> {obj.status}"
    if obj.fields:
        summary += f" · {len(obj.fields)} field{'s' * (len(obj.fields) != 1)}"
    if obj.labels:
        summary += " · " + ", ".join(sorted({label.code for label in obj.labels}))
    block = _Block(summary, limit)
    block.add(f"`{obj.api_version}` · `golden/{env}/{obj.file}`\n\n")
    for label in obj.labels:
        block.add(f"- **{label.code}**: {_cell(label.message)}\n")
    if obj.labels:
        block.add("\n")
    flat = [f for f in obj.fields if f.op != "text"]
    if flat:
        block.add(_field_rows(flat) + "\n")
    for f in obj.fields:
        if f.op == "text":
            block.add(f"`{_cell(f.path)}`:\n\n")
            block.add_code(list(f.diff), "diff")
    if obj.document is not None:
        block.add_code(yamlio.dump(obj.document).splitlines(), "yaml")
    return block.text(env), not block.cut


def file_block(file: FileChange, env: str, limit: int) -> tuple[str, bool]:
    block = _Block(f"{STATUS_MARK[file.status]} <code>{html.escape(file.path)}</code> {file.status}", limit)
    for label in file.labels:
        block.add(f"- **{label.code}**: {_cell(label.message)}\n\n")
    block.add_code(list(file.diff), "diff")
    return block.text(env), not block.cut


_RAY_REASONS_SHOWN = 10


def _ray_view(env: EnvironmentReview) -> list[str]:
    """Capacity in Ray's autoscaler's view beside Kubernetes' (review/ray_view.py), and why they differ."""
    if env.ray_view is None:
        return []
    summary, *rest = env.ray_view.lines()
    shown = [f"- {_cell(line.strip())}\n" for line in rest[:_RAY_REASONS_SHOWN]]
    if len(rest) > _RAY_REASONS_SHOWN:
        shown.append(f"- _{len(rest) - _RAY_REASONS_SHOWN} more: run `krc autoscaler {env.name}`_\n")
    return [f"{_cell(summary)}\n\n", *shown, "\n" if shown else ""]


def format_markdown(review: Review, max_chars: int = MARKDOWN_BUDGET) -> str:
    changed = sum(e.changed for e in review.environments)
    head = [f"## krc diff\n\nRender compared with {review.base}: **{changed} of {len(review.environments)} "
            f"environments changed**" + (f", **{len(review.gates)} CRD upgrade gate(s)**" if review.gates else "")
            + ".\n\n"]
    head += [gate_section(g) for g in review.gates]
    head.append(summary_table(review))
    out = "".join(head)
    if len(out) > max_chars:  # only with absurd numbers of environments: never exceed the limit
        return out[:max_chars - 200] + f"\n\n_Report cut at the comment limit: run `krc diff`, {FULL_REPORT}._\n"
    changed_envs = [e for e in review.environments if e.changed]
    for index, env in enumerate(changed_envs):
        # an even share of what is left, so every environment shows some details; unused room carries over
        limit = len(out) + (max_chars - len(out)) // (len(changed_envs) - index)
        section = [f"### Details: `{env.name}`\n\n", *_ray_view(env)]
        left: Counter[str] = Counter()
        size = len(out) + len(section[0])
        entries: list[tuple[ObjectChange | FileChange, Callable[[str, int], tuple[str, bool]]]] = [
            *((o, functools.partial(object_block, o)) for o in env.objects),
            *((f, functools.partial(file_block, f)) for f in env.files)]
        # objects with KubeRay consequences first: they are what a cut must not hide
        entries.sort(key=lambda entry: not entry[0].labels)
        for position, (obj, make) in enumerate(entries):
            room = limit - size - _NOTICE_ROOM
            if left or room < _MIN_PARTIAL:
                left[obj.status] += 1
                continue
            last = position == len(entries) - 1
            # one huge block (a giant serveConfig) may take half the room, not all of it
            text, _ = make(env.name, room if last else max(room // 2, _MIN_PARTIAL))
            section.append(text)
            size += len(text)
        if left:
            counts = ", ".join(f"{n} {status}" for status, n in sorted(left.items()))
            section.append(f"_{sum(left.values())} more not shown here ({counts}): run `krc diff {env.name}`, "
                           f"{FULL_REPORT}._\n\n")
        out += "".join(section)
    return out
