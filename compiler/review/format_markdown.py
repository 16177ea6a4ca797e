"""`krc diff --format markdown`: a pull-request comment.

Order: the CRD gates, removed environments, the checks (lint and policy findings, errors first), the summary table
(one row per environment, never cut), then per changed environment its grouped changes and a `<details>` block
per object, worst consequence first. GitHub refuses comments over 65,536 characters; the report stays under
`max_chars` (default MARKDOWN_BUDGET, which leaves room for the marker and footer a workflow adds). The sections
before the table get shares of the room; what does not fit is said in one line per item (a gate, a removed
environment) or counted (checks). Details get what is left: a block that does not fit is cut inside (its diff
closes cleanly and says how many lines were left out), later blocks are counted. Whatever is cut points to the
full text report, which the CI workflow puts in the job summary and the `krc-review` artifact.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from ..diagnostics.problems import safe_text
from .diagrams import mermaid_pictures
from .fielddiff import FieldChange
from .format_text import group_words
from .grouping import grouped_places
from .markdown_sections import (
    CELL_CHARS,
    COMMENT_LIMIT,
    FULL_REPORT,
    MARKDOWN_BUDGET,
    check_changes_section,
    check_item,
    gate_section,
    gate_short,
    removed_section,
    removed_short,
    summary_table,
)
from .markup import code, fence, html_text, prose, rich
from .model import STATUS_MARK, EnvironmentReview, FileChange, ObjectChange, Review
from .showing import around_difference, yaml_lines

__all__ = ["COMMENT_LIMIT", "MARKDOWN_BUDGET", "format_markdown"]

Pictures = Callable[[EnvironmentReview], str]
FOLD_LINES = 12  # an added or removed subtree longer than this is folded into a <details> of its own
_MIN_PARTIAL = 800  # below this, a block is counted as left out rather than cut
_NOTICE_ROOM = 400  # kept free for the closing "left out" line of each environment


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

    def add_tree(self, path: str, what: str, lines: list[str]) -> None:
        """A subtree as a YAML block, folded into a <details> of its own past FOLD_LINES lines."""
        if len(lines) <= FOLD_LINES:
            self.add(f"{code(path)} {what}:\n\n")
            self.add_code(lines, "yaml")
            return
        # <summary> is raw HTML, where Markdown's code spans are not read
        if self.add(f"<details><summary><code>{html_text(path)}</code> {what} ({len(lines)} lines)</summary>\n\n"):
            self.add_code(lines, "yaml")
            self.parts.append("\n</details>\n\n")

    def add_code(self, lines: list[str], language: str) -> None:
        opening, closing = fence(lines, language)
        if not self.add(opening):
            return
        self.size += len(closing)
        for index, line in enumerate(lines):
            if not self.add(line + "\n"):
                self.parts.append(f"… {len(lines) - index} more lines\n")
                break
        self.parts.append(closing)

    def text(self, env: str) -> str:
        command = code(f"krc diff {env}")
        note = f"\n_Cut to fit the comment: run {command} for the rest, {FULL_REPORT}._\n" if self.cut else ""
        return "".join(self.parts) + note + self.closing


def _is_tree(value: Any) -> bool:
    return isinstance(value, (dict, list))


def _cells(change: FieldChange) -> tuple[str, str]:
    """Before and after as table cells: subtrees are shown as YAML below the table, a long string around its
    first difference."""
    old, new = change.old, change.new
    if change.op == "changed" and isinstance(old, str) and isinstance(new, str):
        old, new = around_difference(old, new, CELL_CHARS)

    def shown(value: Any, absent: bool) -> str:
        if absent:
            return "_(absent)_"
        return "_(YAML below)_" if _is_tree(value) else code(value, table=True)
    if change.op == "reordered":
        return code(old, table=True), code(new, table=True)
    return shown(old, change.op == "added"), shown(new, change.op == "removed")


def _field_rows(fields: list[FieldChange]) -> str:
    rows = ["| Field | Before | After |\n|---|---|---|\n"]
    for f in fields:
        before, after = _cells(f)
        rows.append(f"| {code(f.path, table=True)}{' (order)' if f.op == 'reordered' else ''} | {before} | {after} |\n")
    return "".join(rows)


def _trees(fields: list[FieldChange]) -> list[tuple[str, str, list[str]]]:
    """(path, what, YAML lines) of every subtree the table says is below: added, removed, or a value that became
    or stopped being a map or list."""
    out = []
    for f in fields:
        if f.op == "reordered":
            continue
        for side, value in (("before", f.old), ("after", f.new)):
            if _is_tree(value):
                word = f.op if f.op in ("added", "removed") else side
                out.append((f.path, word, yaml_lines(value)))
    return out


def object_line(obj: ObjectChange) -> str:
    """One line for an object: mark, ref, status, and its one-line summary (added/removed) or field count."""
    line = f"{STATUS_MARK[obj.status]} <code>{html_text(obj.key.ref)}</code> {obj.status}"
    if obj.summary and ": " in obj.summary:
        line += " · " + html_text(obj.summary.split(": ", 1)[1])
    if obj.fields:
        line += f" · {len(obj.fields)} field{'s' * (len(obj.fields) != 1)}"
    if obj.labels:
        line += " · " + ", ".join(dict.fromkeys(label.severity for label in obj.labels))
    return line


def object_block(obj: ObjectChange, env: str, limit: int, grouped: frozenset[tuple[str, str]] = frozenset()
                 ) -> tuple[str, bool]:
    """The block and whether it is complete."""
    block = _Block(object_line(obj), limit)
    block.add(f"{code(obj.api_version)} · {code(f'golden/{env}/{obj.file}')}\n\n")
    for label in obj.labels:
        block.add(f"- **{label.severity}**: {rich(label.message)}\n")
    if obj.labels:
        block.add("\n")
    flat = [f for f in obj.fields if f.op != "text" and (obj.key.ref, f.path) not in grouped]
    if flat:
        block.add(_field_rows(flat) + "\n")
    for path, word, lines in _trees(flat):
        block.add_tree(path, word, lines)
    hidden = sum((obj.key.ref, f.path) in grouped for f in obj.fields)
    if hidden:
        block.add(f"_{hidden} more change{'s' * (hidden != 1)} in the groups above._\n\n")
    for f in obj.fields:
        if f.op == "text":
            block.add(f"{code(f.path)}:\n\n")
            block.add_code(list(f.diff), "diff")
    if obj.document is not None:
        block.add_code(yaml_lines(obj.document), "yaml")
    return block.text(env), not block.cut


def file_block(file: FileChange, env: str, limit: int) -> tuple[str, bool]:
    block = _Block(f"{STATUS_MARK[file.status]} <code>{html_text(file.path)}</code> {file.status}", limit)
    for label in file.labels:
        block.add(f"- **{label.severity}**: {rich(label.message)}\n\n")
    block.add_code(list(file.diff), "diff")
    return block.text(env), not block.cut


_RAY_REASONS_SHOWN = 10


def _ray_view(env: EnvironmentReview) -> list[str]:
    """Capacity in Ray's autoscaler's view beside Kubernetes' (review/ray_view.py), and why they differ."""
    if env.ray_view is None:
        return []
    summary, *rest = env.ray_view.lines()
    shown = [f"- {rich(line.strip())}\n" for line in rest[:_RAY_REASONS_SHOWN]]
    if len(rest) > _RAY_REASONS_SHOWN:
        shown.append(f"- _{len(rest) - _RAY_REASONS_SHOWN} more: run {code(f'krc autoscaler {env.name}')}_\n")
    return [f"{rich(summary)}\n\n", *shown, "\n" if shown else ""]


def _fitted(full: list[str], short: list[str], room: int) -> str:
    """Items in full while they fit in `room`, the rest in their short form (one line each)."""
    out, size = [], sum(len(text) for text in short)
    for index, text in enumerate(full):
        if size - len(short[index]) + len(text) > room:
            out += short[index:]
            return "".join(out) + f"\n_Shortened to fit the comment: run `krc diff`, {FULL_REPORT}._\n\n"
        out.append(text)
        size += len(text) - len(short[index])
    return "".join(out)


def checks_section(review: Review, room: int) -> str:
    """Every changed environment's checks, errors first over all environments; what does not fit is counted."""
    found = [(env.name, p) for env in review.environments for p in env.checks]
    if not found:
        return ""
    found.sort(key=lambda item: item[1].severity != "error")
    errors = sum(p.severity == "error" for _, p in found)
    out = [f"### Checks: {errors} error{'s' * (errors != 1)}, {len(found) - errors} other finding"
           f"{'s' * (len(found) - errors != 1)}\n\n"
           + ("_Error-level findings block `krc golden` (lower one with `lint.rules` and a reason)._\n\n"
              if errors else "")]
    size = len(out[0]) + 300
    for index, (env, problem) in enumerate(found):
        line = check_item(env, problem)
        if size + len(line) > room:
            rest = found[index:]
            out.append(f"- … {len(rest)} more ({sum(p.severity == 'error' for _, p in rest)} errors): run "
                       f"`krc lint`, {FULL_REPORT}\n")
            break
        out.append(line)
        size += len(line)
    return "".join(out) + "\n"


def _details(env: EnvironmentReview, limit: int, used: int, pictures: Pictures) -> str:
    section = [f"### Details: {code(env.name)}\n\n"]
    # Ray's view, the pictures and the grouped changes come first, each only while it fits this environment's share
    for part in ("".join(_ray_view(env)), pictures(env), "**The same change in several places:**\n\n"
                 + "".join(f"- {rich(group_words(g))}\n" for g in env.groups) + "\n" if env.groups else ""):
        if part and used + sum(map(len, section)) + len(part) <= limit - _NOTICE_ROOM:
            section.append(part)
    grouped = frozenset(grouped_places(env.groups))
    left: Counter[str] = Counter()
    size = used + sum(len(part) for part in section)
    entries: list[ObjectChange | FileChange] = [*env.objects, *env.files]
    # objects with KubeRay consequences first (already worst first): they are what a cut must not hide
    entries.sort(key=lambda entry: not entry.labels)
    for position, item in enumerate(entries):
        room = limit - size - _NOTICE_ROOM
        if left or room < _MIN_PARTIAL:
            left[item.status] += 1
            continue
        # one huge block (a giant serveConfig) may take half the room, not all of it
        share = room if position == len(entries) - 1 else max(room // 2, _MIN_PARTIAL)
        text, _ = (object_block(item, env.name, share, grouped) if isinstance(item, ObjectChange)
                   else file_block(item, env.name, share))
        section.append(text)
        size += len(text)
    if left:
        counts = ", ".join(f"{n} {status}" for status, n in sorted(left.items()))
        section.append(f"_{sum(left.values())} more not shown here ({counts}): run {code(f'krc diff {env.name}')}, "
                       f"{FULL_REPORT}._\n\n")
    return "".join(section)


def format_markdown(review: Review, max_chars: int = MARKDOWN_BUDGET, pictures: Pictures = mermaid_pictures) -> str:
    """The comment; `pictures` draws each changed environment's sync order and capacity (Mermaid by default)."""
    changed = sum(e.changed for e in review.environments)
    errors = sum(e.check_errors for e in review.environments)
    title = (f"## krc diff\n\nRender compared with {prose(review.base)}: **{changed} of {len(review.environments)} "
             f"environments changed**" + (f", **{len(review.removed)} removed**" if review.removed else "")
             + (f", **{len(review.gates)} CRD upgrade gate(s)**" if review.gates else "")
             + (f", **{errors} error-level check(s)**" if errors else "") + ".\n\n")
    table = summary_table(review)
    if len(title) + len(table) > max_chars:  # hundreds of environments: the table is what must stay readable
        return safe_text(title + table[:max_chars - len(title) - 300].rsplit("\n", 1)[0] + (
            f"\n\n_Summary cut at the comment limit: run `krc diff`, {FULL_REPORT}._\n"), lines=True)
    room = max_chars - len(title) - len(table)
    removed = [e for e in review.environments if e.removed]
    # the gates first and most room: they block the merge; then removals, then checks; details get the rest
    gates = _fitted([gate_section(g) for g in review.gates], [gate_short(g) for g in review.gates], room * 5 // 10)
    room -= len(gates)
    removals = _fitted([removed_section(e) for e in removed], [removed_short(e) for e in removed], room * 3 // 10)
    room -= len(removals)
    changes = check_changes_section(review, room * 3 // 10)
    room -= len(changes)
    checks = checks_section(review, room * 4 // 10)
    out = title + gates + changes + removals + checks + table
    changed_envs = [e for e in review.environments if e.changed and not e.removed]
    for index, env in enumerate(changed_envs):
        # an even share of what is left, so every environment shows some details; unused room carries over
        limit = len(out) + (max_chars - len(out) - _NOTICE_ROOM) // (len(changed_envs) - index)
        if limit - len(out) < 2 * _NOTICE_ROOM:  # no room for even a heading: say so once, for all the rest
            note = (f"_Details of {len(changed_envs) - index} more environments not shown: run `krc diff`, "
                    f"{FULL_REPORT}._\n")
            out += note if len(out) + len(note) <= max_chars else ""
            break
        out += _details(env, limit, len(out), pictures)
    # a pull-request comment and a terminal alike: user values' control and bidirectional characters escaped
    return safe_text(out, lines=True)
