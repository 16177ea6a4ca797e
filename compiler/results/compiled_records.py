"""What the compile cache gives back (Compiled, Summary) and the digests its entries are named and checked by:
the records every command reads of a compiled environment, apart from the cache that keeps them
(compile_cache)."""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..cache import cache_key
from ..cache.digests import sha256_hex
from ..diagnostics.problems import Problem, problem_from_json, problem_to_json
from ..k8s.objects import RenderedObject


@dataclass(frozen=True)
class Compiled:
    """One environment's compiled result, as the commands need it: the same from a compile or from the cache."""

    name: str
    key: str  # the cache key it is (or would be) stored under
    chart: tuple[str, str]  # chart name and version
    # golden layout (no crds/): what `krc golden` writes and `krc check` compares; None when a command that writes
    # and compares no files (lint, policy) compiled it: pipeline.context.compiled_files makes them from the objects
    files: dict[str, bytes] | None
    objects: tuple[RenderedObject, ...]
    helm_values: dict[str, Any]
    findings: tuple[Problem, ...]
    chart_objects: tuple[RenderedObject, ...] = ()  # what Helm renders of the pinned chart (Render.chart_objects)
    from_cache: bool = False
    # every file it was compiled from besides templates/ and vendor/ (its layers, the Argo CD CRDs it names): the
    # key names only its own file, so what derives from it (policies, lint, reviews) keys on this too
    inputs_digest: str = ""
    crds: int = 0  # the pinned chart's CRDs (what render and golden report, without reading the chart)
    recorded: tuple[tuple[str, str], ...] = ()  # its inputs as its entry records them ([path, sha256] pairs)

    @property
    def result_key(self) -> str:
        return result_key(self.key, self.inputs_digest)

    @property
    def object_count(self) -> int:
        """The objects it deploys, the chart's included (CRDs apart): what every command counts."""
        return len(self.objects) + len(self.chart_objects)


@dataclass(frozen=True)
class Summary:
    """What a command whose output is already right needs of a compiled environment, kept beside the full entry
    (a few hundred bytes instead of every object): render, check, golden, diff and lint of unchanged ones."""

    name: str
    key: str
    chart: tuple[str, str]
    objects: int
    findings: tuple[Problem, ...]
    file_digests: dict[str, str] | None  # golden-layout path -> sha256 of its bytes; None as Compiled.files
    inputs_digest: str  # as Compiled.inputs_digest
    input_files: tuple[str, ...] = ()  # the files it was compiled from, as recorded (relative to the project)
    crds: int = 0  # as Compiled.crds

    @property
    def result_key(self) -> str:
        return result_key(self.key, self.inputs_digest)


def result_key(key: str, inputs: str) -> str:
    """Which result an output folder holds: the entry's key with every input it recorded (base.yaml too)."""
    return cache_key(key, inputs)


def inputs_digest(recorded: Any) -> str:
    """The digest of recorded inputs ([path, sha256] pairs), the same however they were listed."""
    return sha256_hex(json.dumps(sorted(recorded), separators=(",", ":")).encode())


def findings_digest(findings: Iterable[Problem]) -> str:
    return sha256_hex(json.dumps([problem_to_json(p) for p in findings], sort_keys=True).encode())


def entry_facts(payload: Any) -> tuple[tuple[str, str], tuple[Problem, ...], str, int]:
    """What a full entry and its summary both hold: the chart, the findings, the inputs' digest, the CRD count."""
    chart_name, chart_version = payload["chart"]
    findings = tuple(problem_from_json(p) for p in payload["findings"])
    crds = payload["crds"]
    if not isinstance(crds, int):
        raise TypeError("crds")
    return (str(chart_name), str(chart_version)), findings, inputs_digest(payload["inputs"]), crds


def file_digests(files: dict[str, bytes]) -> dict[str, str]:
    return {path: sha256_hex(content) for path, content in sorted(files.items())}
