"""Which Helm value paths a chart's templates read, so values nothing reads can be reported.

Helm ignores values a chart never reads, and the KubeRay chart has no values.schema.json. A template reads
`.Values.a.b` (also `$.Values...`, `hasKey .Values.a "b"`, `index .Values "a" "b"`); reading a path reads
everything below it (`toYaml .Values.resources`), except in a truth test (`if .Values.batchScheduler`), which
reads no key below it.
"""
from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ...charts.package import Chart

_DOTTED = re.compile(r"\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
# `if .Values.a }}` tests a value for truth: it reads none of the keys below a map (`batchScheduler.nmae`)
_CONDITION = re.compile(r"\b(?:if|and|or|not)\s+\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)\s*(?=-?\}\}|\))")
_KEYED = re.compile(r"(?:hasKey|index)\s+\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)*)((?:\s+\"[^\"]+\")+)")


@dataclass(frozen=True)
class UnreadValue:
    path: tuple[str, ...]
    suggestion: str  # dotted path of the closest value the chart reads, or ""


Paths = frozenset[tuple[str, ...]]


def read_paths(templates: tuple[tuple[str, str], ...]) -> tuple[Paths, Paths]:
    """(paths read with everything below them, keys only probed for existence with hasKey)."""
    reads: set[tuple[str, ...]] = set()
    probes: set[tuple[str, ...]] = set()
    for _, text in templates:
        # `hasKey .Values.a "b"` reads neither all of a nor all of a.b, nor does a truth test: take these out
        # before dotted reads
        for match in _CONDITION.finditer(text):
            probes.add(tuple(match.group(1).strip(".").split(".")))
        for match in _DOTTED.finditer(_CONDITION.sub(" ", _KEYED.sub(" ", text))):
            reads.add(tuple(match.group(1).strip(".").split(".")))
        for match in _KEYED.finditer(text):
            base = tuple(p for p in match.group(1).strip(".").split(".") if p)
            keys = tuple(re.findall(r"\"([^\"]+)\"", match.group(2)))
            if match.group(0).startswith("hasKey"):
                probes.add(base + keys[:1])
            else:
                reads.add(base + keys)
    return frozenset(reads), frozenset(probes)


def _prefixes(paths: Paths) -> Paths:
    """Every path that leads to one of `paths`: their prefixes, themselves and () included."""
    return frozenset(p[:length] for p in paths for length in range(len(p) + 1))


@functools.lru_cache(maxsize=8)
def _chart_reads(name: str, version: str, templates: tuple[tuple[str, str], ...]) -> tuple[Paths, Paths, Paths]:
    """A chart's read_paths, and every path that leads to one of them."""
    reads, probes = read_paths(templates)
    return reads, probes, _prefixes(reads | probes)


def _covered(path: tuple[str, ...], reads: Paths) -> bool:
    """Whether `path` or a path above it is read with everything below it: a set lookup per step of `path`, not
    a scan of every read path."""
    return any(path[:length] in reads for length in range(len(path) + 1))


def _in_defaults(path: tuple[str, ...], defaults: Any) -> bool:
    for step in path:
        if not isinstance(defaults, dict) or step not in defaults:
            return False
        defaults = defaults[step]
    return True


def unread_values(values: dict[str, Any], chart: Chart) -> list[UnreadValue]:
    """Value paths set in `values` that no template reads and the chart's own defaults do not have."""
    reads, probes, leading = _chart_reads(chart.name, chart.version, chart.templates)
    known = reads | probes
    out: list[UnreadValue] = []

    def walk(data: dict[str, Any], prefix: tuple[str, ...]) -> Iterator[None]:
        for key, value in data.items():
            path = prefix + (str(key),)
            if _covered(path, reads):
                continue
            if path in leading and isinstance(value, dict):  # some read path lies below it
                yield from walk(value, path)
                continue
            if path in probes:
                continue
            if _in_defaults(path, chart.values):
                continue  # the chart's own default: not the user's typo
            siblings = sorted({r[len(prefix)] for r in known if r[: len(prefix)] == prefix and len(r) > len(prefix)})
            near = difflib.get_close_matches(str(key), siblings, n=1, cutoff=0.6)
            out.append(UnreadValue(path, ".".join(prefix + (near[0],)) if near else ""))
            yield None

    for _ in walk(values, ()):
        pass
    return sorted(out, key=lambda u: u.path)
