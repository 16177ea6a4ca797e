"""Looking at krc's cache from a test: the entry files of one kind (compiler/cache/store.py's layout)."""
from __future__ import annotations

from pathlib import Path

from compiler.cache import CacheKind


def entry_files(root: Path, kind: CacheKind) -> list[Path]:
    """Every entry of `kind` under the cache `root`, sorted (temporary files of a write in progress excluded)."""
    return sorted(p for p in (root / kind.name).rglob("*") if p.is_file() and not p.name.startswith("."))
