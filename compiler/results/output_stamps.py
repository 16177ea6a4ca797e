"""Which compiled result each rendered/<env>/ folder holds (OutputStamps): `krc render` leaves alone a folder that
still holds exactly what krc wrote for the environment's current result (compile_cache.result_key: its own
file, every layer it extends and everything else its entry's key covers).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..cache import CacheKind, cache_key

# one entry per output folder; bump its version when the stamps' layout or what they hold changes (3: no ctime for
# files with several links)
STAMPS = CacheKind("outputs", 3)


def tree_signature(folder: Path) -> list[list[Any]] | None:
    """Every file below `folder` with its size, inode and times: any write to the folder changes it. A file with
    several links (the chart CRDs a render shares between folders, shared_files) is signed without its ctime:
    removing another folder's link to it changes its link count, hence its ctime, and must not make every
    folder sharing it look touched. Its mtime still changes with any write to it, its inode with any replacement."""
    if not folder.is_dir() or folder.is_symlink():
        return None
    signature: list[list[Any]] = []

    def walk(directory: str, prefix: str) -> None:
        with os.scandir(directory) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.is_dir(follow_symlinks=False):
                    walk(entry.path, f"{prefix}{entry.name}/")
                else:
                    stat = entry.stat(follow_symlinks=False)
                    signed = [prefix + entry.name, stat.st_size, stat.st_ino, stat.st_mtime_ns]
                    signature.append(signed + [stat.st_ctime_ns] if stat.st_nlink == 1 else signed)

    walk(str(folder), "")
    return signature


class OutputStamps:
    """Which result key each rendered/<env>/ folder holds, with the folder's signature when krc wrote it. A
    folder whose signature still matches holds exactly what krc wrote, so an unchanged result need not be
    written again. Kept in the cache dir, per output folder; without the cache, nothing is known."""

    def __init__(self, target: Path, enabled: bool, folder: Path | None = None):
        self.target = target
        self.enabled = enabled
        self.key = cache_key(str(target.resolve()))
        self.folder = folder
        self.stamps: dict[str, Any] = {}
        if enabled:
            loaded = STAMPS.read_json(self.key, folder)
            if isinstance(loaded, dict) and isinstance(loaded.get("stamps"), dict):
                self.stamps = loaded["stamps"]

    def current(self, name: str) -> str | None:
        """The key rendered/<name>/ holds, if it was not touched since krc wrote it."""
        stamp = self.stamps.get(name)
        if not self.enabled or not isinstance(stamp, list) or len(stamp) != 2:
            return None
        key, signature = stamp
        return key if isinstance(key, str) and signature == tree_signature(self.target / name) else None

    def record(self, keys: dict[str, str]) -> None:
        """Stamp the folders just written (those whose key was current already keep their stamp)."""
        if not self.enabled or not keys:
            return
        for name, key in keys.items():
            signature = tree_signature(self.target / name)
            if signature is None:
                self.stamps.pop(name, None)
            else:
                self.stamps[name] = [key, signature]
        STAMPS.write_json(self.key, {"stamps": self.stamps}, self.folder)
