"""Formatting CRD changes for people (text, a pull-request comment in markdown) and for tools (JSON).

Each formatter takes any list of changes, so `krc diff` can embed the CRD section in its own report.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from .changes import SEVERITIES, SEVERITY_ORDER, CrdChange, severity_counts, sorted_changes


def summary_line(changes: Sequence[CrdChange]) -> str:
    if not changes:
        return "no CRD changes"
    counts = severity_counts(changes)
    noun = "change" if len(changes) == 1 else "changes"
    return f"{len(changes)} CRD {noun}: " + ", ".join(f"{counts[s]} {s}" for s in SEVERITIES)


def format_text(changes: Sequence[CrdChange]) -> str:
    """One line per change, grouped by CRD (breaking first inside each), then the summary line."""
    lines: list[str] = []
    current = None
    for change in sorted_changes(changes):
        if change.crd != current:
            current = change.crd
            lines.append(current)
        where = " ".join(part for part in (change.version, change.path) if part)
        where = f"{where}: " if where else ""
        lines.append(f"  {change.severity:<8} {where}{change.message} [{change.check}]")
    lines.append(summary_line(changes))
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{_cell(text)}`" if text else ""


_LABEL = {"breaking": "**breaking**", "warning": "warning", "info": "info"}
_HEADER = "| Severity | CRD | Version | Field | Check | Change |\n|---|---|---|---|---|---|\n"


def format_markdown(changes: Sequence[CrdChange], max_chars: int | None = None) -> str:
    """A pull-request comment: summary, then one table row per change, most severe first.

    With `max_chars`, rows that do not fit are left out (the least severe ones) and counted in a closing line;
    the summary is never cut.
    """
    head = f"### CRD changes\n\n{summary_line(changes)}\n"
    if not changes:
        return head
    rows = sorted(changes, key=lambda c: (SEVERITY_ORDER[c.severity],) + c.sort_key())
    out = [head, "\n", _HEADER]
    size = sum(map(len, out))
    reserve = 120  # room for the line that says how many rows were left out
    shown = 0
    for change in rows:
        row = (f"| {_LABEL[change.severity]} | {_code(change.crd)} | {_cell(change.version)} | "
               f"{_code(change.path)} | {_cell(change.check)} | {_cell(change.message)} |\n")
        if max_chars is not None and size + len(row) + reserve > max_chars:
            break
        out.append(row)
        size += len(row)
        shown += 1
    if shown < len(rows):
        left = severity_counts(rows[shown:])
        detail = ", ".join(f"{left[s]} {s}" for s in SEVERITIES if left[s])
        out.append(f"\n_{len(rows) - shown} more changes not shown ({detail}); run `krc crd-diff` for all._\n")
    return "".join(out)


def format_json(changes: Sequence[CrdChange]) -> str:
    """A JSON list of changes in a fixed order, each with crd, version, path, check, severity, message, old, new."""
    return json.dumps([c.as_dict() for c in sorted_changes(changes)], indent=2, ensure_ascii=False,
                      sort_keys=True, default=str) + "\n"


# `krc crd-diff --format` offers this registry's keys
FORMATTERS: dict[str, Callable[[Sequence[CrdChange]], str]] = {"text": format_text, "markdown": format_markdown,
                                                               "json": format_json}
FORMATS = tuple(FORMATTERS)


def format_changes(changes: Sequence[CrdChange], output_format: str) -> str:
    return FORMATTERS.get(output_format, format_text)(changes)
