"""The review's pictures drawn two ways: Mermaid for the pull-request comment (GitHub renders ```mermaid blocks)
and inline SVG or HTML for the HTML page, which runs no script and loads nothing.

Names in a Mermaid label are reduced to the characters a Kubernetes name and a chart version use (anything else
becomes `_`), inside quotes: a label cannot end its node, open a link or start a Mermaid directive. The HTML form
escapes what it shows.
"""
from __future__ import annotations

import html
import re
from itertools import groupby

from .model import EnvironmentReview, LimitCheck
from .pictures import AcceleratorGpus, SyncApp

_UNSAFE = re.compile(r"[^A-Za-z0-9 ._/:=+,()-]")
BAR_HEIGHT, BAR_GAP, LABEL_WIDTH, CHART_WIDTH = 22, 8, 170, 620


def label(text: str) -> str:
    return '"' + _UNSAFE.sub("_", text)[:80] + '"'


def _waves(apps: tuple[SyncApp, ...]) -> list[tuple[int, list[SyncApp]]]:
    return [(wave, list(members)) for wave, members in groupby(apps, key=lambda app: app.wave)]


def sync_mermaid(env: EnvironmentReview) -> list[str]:
    """Waves left to right, each its Applications; a wave starts once the one before is synced and healthy."""
    if not env.sync:
        return []
    lines = ["flowchart LR"]
    waves = _waves(env.sync)
    for index, (wave, apps) in enumerate(waves):
        lines.append(f"  subgraph w{index}[{label(f'wave {wave}')}]")
        lines += [f"    a{index}_{n}[{label(app.name + (' - ' + app.syncs if app.syncs else ''))}]"
                  for n, app in enumerate(apps)]
        lines.append("  end")
    lines += [f"  w{index} --> w{index + 1}" for index in range(len(waves) - 1)]
    return lines


def _tightest(limits: tuple[LimitCheck, ...]) -> LimitCheck | None:
    found = sorted((lim for lim in limits if lim.resource == "gpu"), key=lambda lim: lim.maximum)
    return found[0] if found else None


def _bars(env: EnvironmentReview) -> list[AcceleratorGpus]:
    rows = list(env.accelerators)
    if len(rows) > 1:
        rows.append(AcceleratorGpus("total", sum(r.before for r in rows), sum(r.after for r in rows)))
    return rows


def capacity_mermaid(env: EnvironmentReview) -> list[str]:
    """GPUs at max scale per accelerator (bars, after the change) against the tightest policy limit (a line)."""
    rows, limit = _bars(env), _tightest(env.limits)
    if not rows:
        return []
    top = max([r.after for r in rows] + [r.before for r in rows] + ([limit.maximum] if limit else []))
    title = f"{env.name}: GPUs at max scale" + (f" (limit {limit.maximum}, {limit.policy})" if limit else "")
    lines = ["xychart-beta", f"  title {label(title)}",
             "  x-axis [" + ", ".join(label(r.accelerator) for r in rows) + "]",
             f'  y-axis "GPUs" 0 --> {max(1, top + top // 5)}',
             "  bar [" + ", ".join(str(r.after) for r in rows) + "]"]
    if limit:
        lines.append("  line [" + ", ".join(str(limit.maximum) for _ in rows) + "]")
    return lines


def sync_html(env: EnvironmentReview) -> str:
    if not env.sync:
        return ""
    waves = []
    for wave, apps in _waves(env.sync):
        items = "".join(f'<li><span class="app">{html.escape(app.name)}</span>'
                        + (f' <span class="syncs">{html.escape(app.syncs)}</span>' if app.syncs else "") + "</li>"
                        for app in apps)
        waves.append(f'<li class="wave"><span class="wave-name">wave {wave}</span><ul>{items}</ul></li>')
    return (f'<figure class="sync" aria-label="sync order of {html.escape(env.name)}"><figcaption>Sync order of '
            f'{html.escape(env.name)} (Argo CD syncs each wave once the one before is healthy)</figcaption>'
            f'<ol class="waves">{"".join(waves)}</ol></figure>')


def capacity_svg(env: EnvironmentReview) -> str:
    rows, limit = _bars(env), _tightest(env.limits)
    if not rows:
        return ""
    top = max([r.after for r in rows] + [r.before for r in rows] + ([limit.maximum] if limit else []) + [1])
    scale = (CHART_WIDTH - LABEL_WIDTH - 80) / top
    height = len(rows) * (BAR_HEIGHT + BAR_GAP) + 30
    parts = []
    for index, row in enumerate(rows):
        y = index * (BAR_HEIGHT + BAR_GAP) + 10
        over = limit is not None and row.after > limit.maximum
        change = f"{row.before} → {row.after}" if row.before != row.after else str(row.after)
        parts.append(f'<text x="{LABEL_WIDTH - 8}" y="{y + 16}" text-anchor="end">{html.escape(row.accelerator)}'
                     f'</text><rect x="{LABEL_WIDTH}" y="{y}" width="{row.after * scale:.1f}" height="{BAR_HEIGHT}" '
                     f'class="{"over" if over else "bar"}"/><text x="{LABEL_WIDTH + row.after * scale + 6:.1f}" '
                     f'y="{y + 16}">{html.escape(change)}</text>')
    if limit:
        x = LABEL_WIDTH + limit.maximum * scale
        # the words end at the line: they stay inside the picture however far right the limit is
        parts.append(f'<line x1="{x:.1f}" y1="4" x2="{x:.1f}" y2="{height - 18}" class="limit"/><text x="{x:.1f}" '
                     f'y="{height - 4}" text-anchor="end">limit {limit.maximum} '
                     f'({html.escape(limit.policy)})</text>')
    title = f"{env.name}: GPUs at max scale"
    return (f'<figure class="capacity"><figcaption>{html.escape(title)}</figcaption><svg role="img" '
            f'aria-label="{html.escape(title)}" width="{CHART_WIDTH}" height="{height}" '
            f'viewBox="0 0 {CHART_WIDTH} {height}">{"".join(parts)}</svg></figure>')


def mermaid_pictures(env: EnvironmentReview) -> str:
    """The environment's pictures as Markdown: Mermaid blocks GitHub draws, each with a line saying what it is."""
    out = []
    sync, capacity = sync_mermaid(env), capacity_mermaid(env)
    if sync:
        out.append("**Sync order** (Argo CD syncs a wave once the one before is healthy):\n\n```mermaid\n"
                   + "\n".join(sync) + "\n```\n\n")
    if capacity:
        out.append("**GPUs at max scale** per accelerator, against the tightest policy limit:\n\n```mermaid\n"
                   + "\n".join(capacity) + "\n```\n\n")
    return "".join(out)
