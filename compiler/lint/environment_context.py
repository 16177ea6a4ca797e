"""Environment mode: the lint context of one compiled environment (its objects, Helm values, gates and settings)."""
from __future__ import annotations

from typing import Any

from ..diagnostics.problems import KrcError, Location, Problem
from ..k8s.destinations import Destination, destination_of, peer_index
from ..render.provenance import object_positions
from ..render.templates import Render, kubernetes_version
from ..rules.support.context import LintContext, LintObject, RuleSetting
from ..rules.support.feature_gates import chart_default_gates


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


def environment_context(render: Render, peers: tuple[Destination, ...] = ()) -> LintContext:
    """The lint context of one environment; `peers` are where the project's environments deploy (the one tuple
    for every environment of a run: indexed once), of which it keeps those its findings read."""
    env = render.environment
    file = env.files[-1] if env.files else f"environments/{env.name}.yaml"
    index = peer_index(peers)
    objects = tuple(LintObject(o.document, o.location or Location(file),
                               object_positions(o.document, env.location_of, env.written_at))
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
        peer_destinations=index.relevant_to(destination_of(env.name, env.data, file, tuple(env.files[:-1]))),
        environment_accepted=index.accepted(env.name),
        chart_objects=tuple(LintObject(o.document, o.location or Location(file)) for o in render.chart_objects),
        kubernetes_version=kubernetes_version(env),
    )
