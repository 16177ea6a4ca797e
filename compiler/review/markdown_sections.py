"""The head of the pull-request comment: CRD gates, removed environments, checks and the summary table, each
also in a short form (one line per item) for when the full form does not fit the comment."""
from __future__ import annotations

from collections import Counter
from typing import Any

from .. import crddiff
from ..diagnostics.problems import Problem
from .crdgate import CrdGate, gate_statements
from .format_text import BREAKING_SHOWN, approval_lines, limit_words
from .grouping import group_crd_changes
from .labels import IMPACTS
from .markup import code, fence, prose, rich
from .model import EnvironmentReview, Review

COMMENT_LIMIT = 65_536  # GitHub's limit for an issue or pull-request comment
MARKDOWN_BUDGET = COMMENT_LIMIT - 1_536
FINDINGS_SHOWN = 30  # per list of schema findings in a gate
CELL_CHARS = 300
# where the uncut report is in CI (.github/workflows/krc-review.yml writes it: krc diff --output text=...)
FULL_REPORT = "or see the full report in the CI job summary or the `krc-review` artifact (krc-review.txt)"


def _findings(title: str, findings: list[Any], pruned_words: bool, env: str) -> list[str]:
    if not findings:
        return [f"- {title}: all valid\n"]
    out = [f"- {title}: {len(findings)} findings\n"]
    for f in findings[:FINDINGS_SHOWN]:
        lead = f"**pruned silently**: field {code(f.path)} of {code(f.object)}" if pruned_words and f.pruned else \
            f"{f.severity}: {code(f.object)} {code(f.path)}"
        out.append(f"  - {lead}: {rich(f.message)}\n")
    if len(findings) > FINDINGS_SHOWN:
        out.append(f"  - … {len(findings) - FINDINGS_SHOWN} more: run {code(f'krc diff {env}')}\n")
    return out


def gate_section(gate: CrdGate) -> str:
    out = [(f"### :warning: CRD upgrade gate: {code(gate.environment)} ({prose(gate.chart)} "
            f"{prose(gate.old_version)} → {prose(gate.new_version)})\n\n")]
    out += [f"- **{rich(s)}**\n" if i == 0 else f"- {rich(s)}\n" for i, s in enumerate(gate_statements(gate))]
    out.append("\n| CRD | Kind | Change |\n|---|---|---|\n")
    out += [f"| {code(c.name, table=True)} | {prose(c.kind)} | {c.status} |\n" for c in gate.crds]
    result = crddiff.summary_line(gate.changes) if gate.compared else f"not compared: {gate.unavailable}"
    out.append(f"\n**crd-diff {prose(gate.old_version)} → {prose(gate.new_version)}: {rich(result)}**\n\n")
    groups = group_crd_changes(c for c in gate.changes if c.severity == "breaking")
    if groups:
        out.append("<details><summary>Breaking CRD changes</summary>\n\n")
        for group in groups[:BREAKING_SHOWN]:
            where = f" in {len(group.places)} places" if len(group.places) > 1 else ""
            places = ", ".join(code(place) for place in group.places[:FINDINGS_SHOWN])
            more = f" and {len(group.places) - FINDINGS_SHOWN} more" if len(group.places) > FINDINGS_SHOWN else ""
            out.append(f"- {code(group.field)}{where}: {rich(group.message)} \\[{prose(group.check)}\\]: "
                       f"{places}{more}\n")
        if len(groups) > BREAKING_SHOWN:
            out.append(f"- … {len(groups) - BREAKING_SHOWN} more: `krc crd-diff {gate.chart}@{gate.old_version} "
                       f"{gate.chart}@{gate.new_version}`\n")
        out.append("\n</details>\n\n")
    out += [f"- note: {rich(n)}\n" for n in gate.notes]
    out += _findings("Golden objects under the new CRDs", list(gate.golden_under_new), False, gate.environment)
    old_title = "New objects under the old CRDs (live until the CRDs are applied)"
    if gate.compared:
        out += _findings(old_title, list(gate.rendered_under_old), True, gate.environment)
    else:
        out.append(f"- {old_title}: **not checked**: {rich(gate.unavailable)}\n")
    lines = approval_lines(gate)
    mark = ":white_check_mark:" if gate.approval.status in ("approved", "not-required") else ":x:"
    out.append(f"\n{mark} **{rich(lines[0])}**\n")
    if gate.approval.status in ("missing", "mismatch"):
        out += [f"- {rich(p)}\n" for p in gate.approval.problems]
        opening, closing = fence(gate.approval.template.splitlines(), "yaml")
        command = f'krc approve {gate.environment} --base <base branch> --reason "..."'
        out.append(f"\nAfter review, run {code(command)} "
                   f"and commit {code(gate.approval.file)} (a maintainer approves it as its code owner); it writes:"
                   f"\n\n{opening}{gate.approval.template}{closing}")
    return "".join(out) + "\n"


def _capacity_cell(env: EnvironmentReview, part: str) -> str:
    before, after = env.capacity_before.as_dict()[part], env.capacity_after.as_dict()[part]
    text = str(after) if before == after else f"{before} → **{after}**"
    if part == "gpu":
        text += limit_words(env.limits, "gpu").replace(" ✗", " **✗**")
    if env.upgrade_peak:
        text += f" (peak {env.upgrade_peak.as_dict()[part]})"
    return text


def consequences_cell(env: EnvironmentReview) -> str:
    """Impacts in plain words, worst first: `**outage** ×2, restart ×1`."""
    impacts = Counter(label.severity for o in env.objects for label in o.labels)
    impacts.update(label.severity for f in env.files for label in f.labels)
    words = [f"{'**' + i + '**' if i == IMPACTS[0] else i} ×{impacts[i]}" for i in IMPACTS if impacts[i]]
    return ", ".join(words) or "none"


def summary_table(review: Review) -> str:
    out = [("### Summary\n\n| Environment | Added | Removed | Changed | Unchanged | CRDs | CPU at max | GPU at max "
           "| Memory at max | Consequences |\n|---|---|---|---|---|---|---|---|---|---|\n")]
    for env in review.environments:
        consequences = consequences_cell(env)
        if env.check_errors:
            consequences += f"; **{env.check_errors} check error{'s' * (env.check_errors != 1)}**"
        if env.new_errors:
            consequences += f"; **{env.new_errors} new check error{'s' * (env.new_errors != 1)}**"
        crds = "unchanged" if env.gate is None else (
            f"**{env.gate.old_version} → {env.gate.new_version}**"
            + ("" if not env.gate.blocking else f" (approval {env.gate.approval.status})"))
        name = f"{code(env.name)} **(removed)**" if env.removed else f"{code(env.name)}"
        out.append(f"| {name} | {env.count('added')} | {env.count('removed')} | {env.count('changed')} | "
                   f"{env.unchanged} | {crds} | {_capacity_cell(env, 'cpu')} | {_capacity_cell(env, 'gpu')} | "
                   f"{_capacity_cell(env, 'memory')} | {consequences} |\n")
    peaks = [e.name for e in review.environments if e.upgrade_peak]
    if peaks:
        out.append("\n_peak: while a replaced RayService cluster and its new one both run ("
                   + ", ".join(peaks) + ")._\n")
    return "".join(out) + "\n"


def gate_short(gate: CrdGate) -> str:
    status = "approved" if gate.approval.status in ("approved", "not-required") else f"**{gate.approval.status}**"
    reasons = "; ".join(gate.blocking) or "no breaking change"
    return (f"- :warning: {code(gate.environment)}: CRD upgrade {prose(gate.chart)} {prose(gate.old_version)} → "
            f"{prose(gate.new_version)} ({rich(reasons)}); approval {status}\n")


def removed_section(env: EnvironmentReview, shown: int = 40) -> str:
    out = [(f"### :x: Environment removed: {code(env.name)}\n\n{code(f'environments/{env.name}.yaml')} is gone "
            f"and golden/ still has it: deploying this prunes all {env.count('removed')} objects.\n\n")]
    for obj in env.objects[:shown]:
        words = "; ".join(f"**{label.severity}**: {rich(label.message)}" for label in obj.labels)
        out.append(f"- {code(obj.summary or obj.key.ref)}" + (f": {words}" if words else "")
                   + "\n")
    if len(env.objects) > shown:
        out.append(f"- … {len(env.objects) - shown} more: run `krc diff`\n")
    return "".join(out) + "\n"


def removed_short(env: EnvironmentReview) -> str:
    worst = Counter(label.severity for o in env.objects for label in o.labels)
    return (f"- :x: {code(env.name)} removed: {env.count('removed')} objects pruned ("
            + ", ".join(f"{i} ×{worst[i]}" for i in IMPACTS if worst[i]) + ")\n")


def check_item(env: str, problem: Problem) -> str:
    mark = {"error": ":x: **error**", "warning": ":warning: warning", "info": "info"}[problem.severity]
    where = code(str(problem.location)) if problem.location else code(problem.object or env)
    return f"- {mark} {code(env)} {where} \\[{code(problem.rule or 'krc')}\\]: {rich(problem.message)}\n"


def check_changes_section(review: Review, room: int) -> str:
    """Findings new against the base's and those resolved, new errors first; what does not fit is counted."""
    new, resolved = review.new_checks, review.resolved_checks
    if not review.checks_base or not (new or resolved):
        return f"_{rich(review.checks_note)}_\n\n" if review.checks_note else ""
    errors = sum(p.severity == "error" for _, p in new)
    out = [f"### Checks against {prose(review.checks_base)}: {len(new)} new ({errors} error"
           f"{'s' * (errors != 1)}), {len(resolved)} resolved\n\n"
           + ("_A new error blocks `krc golden` as it blocks this change._\n\n" if errors else "")]
    size = len(out[0]) + 300
    items = [("new", env, p) for env, p in new] + [("resolved", env, p) for env, p in resolved]
    for index, (what, env, problem) in enumerate(items):
        line = f"- **{what}**: " + check_item(env, problem).removeprefix("- ")
        if size + len(line) > room:
            out.append(f"- … {len(items) - index} more: run `krc diff`, {FULL_REPORT}\n")
            break
        out.append(line)
        size += len(line)
    return "".join(out) + "\n"
