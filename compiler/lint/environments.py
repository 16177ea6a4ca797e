"""Environment mode: lint what an environment renders, its operator's Helm values and the environment itself."""
from __future__ import annotations

from typing import Any

from ..pipeline import Render, compile_environment
from ..problems import KrcError, Location, Problem
from ..project import Project
from .context import LintContext, LintObject, RuleSetting
from .facts import chart_default_gates
from .provenance import object_positions


def rule_settings(render: Render) -> dict[str, RuleSetting]:
    """`lint: {rules: {<id>: {severity, reason}}}` of the environment; malformed entries are bad input."""
    env = render.environment
    rules: Any = (env.data.get("lint") or {}).get("rules") or {}
    if not isinstance(rules, dict):
        raise KrcError("lint.rules must map rule ids to {severity, reason}", env.location_of(("lint", "rules")))
    settings = {}
    for rule_id, entry in rules.items():
        where = env.location_of(("lint", "rules", rule_id))
        if not isinstance(entry, dict) or not str(entry.get("reason") or "").strip():
            raise KrcError(Problem(f"lint.rules.{rule_id} needs a 'reason' saying why the rule is changed here; "
                                   "add one", where))
        # an unquoted `off` is YAML 1.1's false
        severity = entry.get("severity")
        settings[str(rule_id)] = RuleSetting("off" if severity in (None, False) else str(severity),
                                             str(entry["reason"]), where)
    return settings


def environment_context(render: Render) -> LintContext:
    env = render.environment
    file = env.files[-1] if env.files else f"environments/{env.name}.yaml"
    objects = tuple(LintObject(o.document, o.location or Location(file), object_positions(o.document, env.location_of))
                    for o in render.objects)
    version = render.chart.version
    return LintContext(
        objects=objects,
        operator_version=version,
        feature_gates=chart_default_gates(version, render.helm_values),
        chart=render.chart,
        mode="environment",
        environment_name=env.name,
        environment=env.data,
        helm_values=render.helm_values,
        production=env.data.get("production") is True,
        cpu_only=env.data.get("cpuOnly") is True,
        rule_settings=rule_settings(render),
        locate_environment=env.location_of,
        environment_file=file,
    )


def environment_findings(project: Project, names: list[str], argocd_crds: str | None = None) -> list[Problem]:
    """Every finding of each environment: schema and rules over what it renders, plus its Argo CD objects
    against the Argo CD CRDs it names. Every environment's input errors are reported together."""
    from ..pipeline import environment_findings as render_findings

    findings: list[Problem] = []
    problems: list[Problem] = []
    renders: list[Render] = []
    for name in project.select(names):
        try:
            render = compile_environment(project, name)
            findings.extend(render_findings(render, project, argocd_crds))
            renders.append(render)
        except KrcError as err:
            problems.extend(err.problems)
    if problems:
        raise KrcError(problems)
    return findings + policy_findings(project, renders)


def policy_findings(project: Project, renders: list[Render]) -> list[Problem]:
    """The organisation's CUE policies (policies/*.cue), in one engine run for every environment.

    They are the organisation's rules, so an environment's `lint.rules` settings do not change them. Without a
    CUE engine the other findings are still reported, plus an error saying the policies were not checked: a CI
    job without the engine must not pass as if they had been.
    """
    from ..policy import policy_findings as evaluate
    from ..policy.engine import find_engine
    from ..policy.evaluate import policy_files

    if not renders or not policy_files(project.policies_dir):
        return []
    try:
        engine = find_engine([project.root])
    except KrcError as err:
        return [Problem(f"the policies in policies/ were not checked: {err.problems[0].message}",
                        Location(project.relative(project.policies_dir)), "error", "policy/engine")]
    return evaluate(project, renders, engine)
