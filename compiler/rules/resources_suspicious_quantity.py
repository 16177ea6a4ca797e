"""A CPU or memory amount that is valid but almost certainly not what was meant.

`memory: 32` is 32 bytes (Kubernetes reads a bare number as bytes): the Pod cannot start its container.
`cpu: 4000` is four thousand cores: no node fits it and the Pod stays Pending. Both are quantities the API
server accepts, so nothing else catches them before the cluster does. In a production environment too little
memory is an error instead (`resources/tiny-memory-in-production`).

Fails:

    workerGroupSpecs:
    - groupName: cpu
      template: {spec: {containers: [{name: w, resources: {limits: {cpu: 4000, memory: 32}}}]}}

Passes:

    workerGroupSpecs:
    - groupName: cpu
      template: {spec: {containers: [{name: w, resources: {limits: {cpu: "4", memory: 32Gi}}}]}}
"""
from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from ..diagnostics.problems import Problem
from ..k8s.quantities import parse_quantity
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_groups
from .support.small_quantities import SMALLEST_MEMORY

ABOUT = About("resources/suspicious-quantity", "warning",
              "memory below 1Mi (a number without a unit is bytes) or cpu of 256 cores or more (millicores need 'm')")

LARGEST_CPU = Decimal(256)  # cores; larger single Pods do not exist in practice, 4000 means 4000m


def _number(value: object) -> str:
    return str(value).strip()


def check(context: LintContext) -> Iterator[Problem]:
    for cluster, group in cluster_groups(context):
        for index, container in enumerate(group.containers):
            resources = container.get("resources")
            reported: set[str] = set()  # requests usually equal limits: one finding per field
            for kind in ("limits", "requests"):
                amounts = resources.get(kind) if isinstance(resources, dict) else None
                if not isinstance(amounts, dict):
                    continue
                path = group.path + ("template", "spec", "containers", index, "resources", kind)
                memory, cpu = parse_quantity(amounts.get("memory")), parse_quantity(amounts.get("cpu"))
                # in production too little memory is the error resources/tiny-memory-in-production
                if (memory is not None and 0 < memory < SMALLEST_MEMORY and "memory" not in reported
                        and not context.production):
                    reported.add("memory")
                    shown = _number(amounts["memory"])
                    yield cluster.obj.problem(
                        f"{group.name} group: memory {shown} is {shown} bytes; write memory: {shown}Gi (or the "
                        f"unit you meant: Mi, Gi)", path + ("memory",))
                if cpu is not None and cpu >= LARGEST_CPU and "cpu" not in reported:
                    reported.add("cpu")
                    shown = _number(amounts["cpu"])
                    yield cluster.obj.problem(
                        f"{group.name} group: cpu {shown} is {shown} cores; for millicores write cpu: {shown}m, "
                        f"for cores a number like cpu: 4", path + ("cpu",))
