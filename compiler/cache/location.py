"""Where krc keeps what it can rebuild: outside any repository.

KRC_CACHE_DIR, else $XDG_CACHE_HOME/krc/<format>, else ~/.cache/krc/<format>. Every use is best effort: a read-only
home (an Argo CD sidecar) only costs speed, never correctness.
"""
from __future__ import annotations

from pathlib import Path

from ..settings import variables

# The layout's version: a new one starts an empty folder, so entries of an older layout are never even looked at.
LAYOUT = "v5"  # v5: one folder per kind (store.CacheKind._folders)


def cache_dir() -> Path:
    explicit = variables.value("KRC_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(variables.value("XDG_CACHE_HOME") or Path.home() / ".cache") / "krc" / LAYOUT
