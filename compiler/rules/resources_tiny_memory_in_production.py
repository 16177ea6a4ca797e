"""In production, no Ray container has less than 1Mi of memory (a number without a unit is bytes).

`memory: 56` is 56 bytes: the container is killed for running out of memory as it starts, so the group never
runs. Elsewhere this is the warning `resources/suspicious-quantity`; in a production environment it is an error.

Fails (production):

    workerGroups:
      - name: cpu
        memory: 56

Passes (production):

    workerGroups:
      - name: cpu
        memory: 56Gi
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from ..k8s.quantities import parse_quantity
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_groups
from .support.small_quantities import SMALLEST_MEMORY

ABOUT = About("resources/tiny-memory-in-production", "error",
              "in production, memory below 1Mi (a number without a unit is bytes) is an error", environment_only=True)


def check(context: LintContext) -> Iterator[Problem]:
    if not context.production:
        return
    for cluster, group in cluster_groups(context):
        for index, container in enumerate(group.containers):
            resources = container.get("resources")
            for kind in ("limits", "requests"):
                amounts = resources.get(kind) if isinstance(resources, dict) else None
                memory = parse_quantity(amounts.get("memory")) if isinstance(amounts, dict) else None
                if memory is not None and 0 < memory < SMALLEST_MEMORY:
                    shown = str(amounts["memory"]).strip()  # type: ignore[index]
                    yield cluster.obj.problem(
                        f"{group.name} group: memory {shown} is {shown} bytes, too little for any container to "
                        f"start in production; write memory: {shown}Gi (or the unit you meant: Mi, Gi)",
                        group.path + ("template", "spec", "containers", index, "resources", kind, "memory"))
                    break  # requests usually equal limits: one finding per container
