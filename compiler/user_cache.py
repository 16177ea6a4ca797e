"""Where krc keeps what it can rebuild (parsed CRDs, CEL parser tables): outside any repository.

KRC_CACHE_DIR, else $XDG_CACHE_HOME/krc, else ~/.cache/krc. Every use is best effort: a read-only home (an Argo
CD sidecar) only costs speed, never correctness.
"""
from __future__ import annotations

import os
from pathlib import Path

# Bumped when the layout or the meaning of a cached file changes, so an old cache is never believed.
CACHE_FORMAT = "v3"


def cache_dir() -> Path:
    explicit = os.environ.get("KRC_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "krc" / CACHE_FORMAT
