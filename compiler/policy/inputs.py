"""From compiled environments to the inputs CUE policies judge."""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ..diagnostics import fieldpath
from ..diagnostics.problems import KrcError, Location, Problem
from ..environment.layering import named_path
from ..lint.environment_context import rule_settings
from ..project.paths import Project, policy_files
from ..render.provenance import object_positions
from ..render.templates import Render
from .engine import CueEngine
from .evaluate import InputPath, PolicyInput, findings_by_environment


def policy_input(render: Render) -> PolicyInput:
    env = render.environment
    objects = tuple(o.document for o in render.objects)

    def locate(path: InputPath) -> Location | None:
        if path[:1] == ("env",):
            # provenance keys list items by name (clusters.gpu...), CUE reports indexes (clusters.0...)
            return env.location_of(named_path(env.data, path[1:]))
        if path[:1] == ("objects",) and len(path) > 1 and isinstance(path[1], int) and path[1] < len(objects):
            # the environment line of the field when provenance maps it, else of the item that made the object
            positions = object_positions(objects[path[1]], env.location_of, env.written_at) or {}
            return fieldpath.nearest(positions.get, tuple(path[2:])) or render.objects[path[1]].location
        return None

    return PolicyInput(env.name, policy_environment(env.name, env.data), objects, locate)


# Fields every policy may read without guarding: an environment that does not set them gets these values
ALWAYS_SET = {"production": False, "cpuOnly": False}


def policy_environment(name: str, data: dict[str, Any]) -> dict[str, Any]:
    """The `env` that policies see: the resolved environment plus its name and the always-set flags."""
    return {**ALWAYS_SET, **data, "name": name}


def policy_findings(project: Project, renders: Sequence[Render], engine: CueEngine | None = None,
                    settings: bool = True) -> dict[str, list[Problem]]:
    """The project's policies on environments it already compiled, by environment, in one engine run.

    With `settings`, each environment's `lint.rules` entries for `policy/<name>` apply as for lint rules: a
    finding is dropped (off) or given the lower severity the environment states, with its reason.
    """
    policies = policy_files(project.policies_dir)
    if not policies or not renders:
        return {r.environment.name: [] for r in renders}
    found = findings_by_environment(project.policies_dir, [policy_input(r) for r in renders], engine=engine,
                                    show_path=project.relative)
    if settings:
        names = {f"policy/{p.stem}" for p in policies}
        found = {r.environment.name: with_policy_settings(r, found[r.environment.name], names) for r in renders}
    return found


def with_policy_settings(render: Render, findings: Sequence[Problem], policy_ids: set[str]) -> list[Problem]:
    """The environment's `lint.rules` settings for policies applied to its findings; a setting for a policy that
    does not exist is bad input (lint settings are checked the same way)."""
    settings = {rule: s for rule, s in rule_settings(render).items() if rule.startswith("policy/")}
    unknown = sorted(set(settings) - policy_ids)
    if unknown:
        raise KrcError([Problem(f"lint setting for '{rule}', but policies/ has no {rule.removeprefix('policy/')}.cue; "
                                f"policies: {', '.join(sorted(policy_ids)) or 'none'}", settings[rule].location)
                        for rule in unknown])
    out = []
    for finding in findings:
        setting = settings.get(finding.rule)
        if setting is None:
            out.append(finding)
        elif setting.severity != "off":
            out.append(dataclasses.replace(finding, severity=setting.severity,  # type: ignore[arg-type]
                                           message=f"{finding.message} (lowered: {setting.reason})"))
    return out
