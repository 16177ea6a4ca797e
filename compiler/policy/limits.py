"""Capacity limits that policies state, so the review can show capacity against them (`39 / 32 ✗`).

A policy marks the number it enforces with a CUE attribute, which CUE itself ignores:

    _maxGpus: 32 @krc(limit=gpu, environments=production)

`limit` names the resource (gpu); `environments` says where the limit applies: all (default), production or
non-production (the `production` flag of the environment). The policy stays the judge: the review only shows the
number beside the capacity at maximum scale.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..diagnostics.problems import KrcError, Location
from ..project.paths import policy_files

RESOURCES = ("gpu",)
SCOPES = ("all", "production", "non-production")
_ATTRIBUTE = re.compile(r"^\s*[#_A-Za-z][A-Za-z0-9_]*\s*:\s*(\d+)\s*@krc\(([^)]*)\)")


@dataclass(frozen=True)
class CapacityLimit:
    policy: str  # policy/<file stem>, the rule id of its findings
    resource: str
    maximum: int
    environments: str  # one of SCOPES

    def applies(self, production: bool) -> bool:
        return self.environments == "all" or (self.environments == "production") == production


def _parse(arguments: str, where: Location) -> tuple[str, str]:
    pairs = dict(part.strip().partition("=")[::2] for part in arguments.split(",") if part.strip())
    resource, scope = pairs.pop("limit", ""), pairs.pop("environments", "all")
    if resource not in RESOURCES:
        raise KrcError(f"@krc(limit=...) names '{resource}'; use limit={'|'.join(RESOURCES)}", where)
    if scope not in SCOPES:
        raise KrcError(f"@krc(environments=...) is '{scope}'; use one of {', '.join(SCOPES)}", where)
    if pairs:
        raise KrcError(f"@krc(...) does not know {', '.join(sorted(pairs))}; use limit= and environments=", where)
    return resource, scope


def capacity_limits(policy_dir: Path, show_path: Callable[[Path], str]) -> list[CapacityLimit]:
    """Every `@krc(limit=...)` of every policy file; a malformed one is bad input."""
    limits = []
    for path in policy_files(policy_dir):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            found = _ATTRIBUTE.match(line)
            if found:
                resource, scope = _parse(found[2], Location(show_path(path), number, line.index("@") + 1))
                limits.append(CapacityLimit(f"policy/{path.stem}", resource, int(found[1]), scope))
    return limits
