"""A chart archive's listing and the texts krc reads of it (Chart.yaml, values.yaml, templates/), kept in krc's cache
by the archive's digest: a process loading a chart it has read before takes them from here instead of unpacking
the archive, most of whose bytes are CRDs whose facts have a cache entry of their own (package.CRD_CACHE).
Unpacking KubeRay's 4 MB was about 20 ms per chart and process: the time a one-environment render waits for the
chart its environment pins. Written only after the archive was unpacked and checked (package._members) and its
texts read as UTF-8, so an entry holds what a full read of those bytes gave; keyed by the archive bounds in force
too, so an archive a lowered bound refuses is refused again rather than taken from here.
"""
from __future__ import annotations

from typing import Any

from ..cache import CacheKind, cache_key
from ..settings import limits

# Bump the version when the layout changes.
CHART_TEXTS = CacheKind("chart-texts", 1)


def _key(digest: str) -> str:
    return cache_key(digest, str(limits.ARCHIVE_BYTES.value), str(limits.ARCHIVE_MEMBERS.value))


def wanted(root: str, name: str) -> bool:
    """Whether a chart read keeps the member's text: its metadata, its default values and its templates."""
    return name in (f"{root}/Chart.yaml", f"{root}/values.yaml") or name.startswith(f"{root}/templates/")


def kept(digest: str) -> tuple[list[str], dict[str, str]] | None:
    """The archive's file names and the texts `wanted` keeps, as a full read gave them; None when not kept (or
    the entry is not what this krc writes)."""
    entry: Any = CHART_TEXTS.read_json(_key(digest))
    if not isinstance(entry, dict):
        return None
    names, texts = entry.get("names"), entry.get("texts")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or not isinstance(texts, dict) \
            or not all(isinstance(t, str) for t in texts.values()) or not set(texts) <= set(names):
        return None
    return names, texts


def keep(digest: str, names: list[str], texts: dict[str, str]) -> None:
    CHART_TEXTS.write_json(_key(digest), {"names": names, "texts": texts})
