"""From compiled environments to the inputs CUE policies judge."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import fieldpath
from ..environment.layering import named_path
from ..problems import Location, Problem
from ..project import Project
from ..provenance import object_positions
from ..render import Render
from .engine import CueEngine
from .evaluate import InputPath, PolicyInput, evaluate_policies, policy_files


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


def policy_findings(project: Project, renders: Sequence[Render], engine: CueEngine | None = None) -> list[Problem]:
    """For `krc lint`: the project's policies on environments it already compiled ([] when there are none)."""
    if not policy_files(project.policies_dir) or not renders:
        return []
    return evaluate_policies(project.policies_dir, [policy_input(r) for r in renders], engine=engine,
                             show_path=project.relative)
