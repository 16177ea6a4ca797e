"""What cache keys are made of: digests of files, folders and krc's own code, and the input bounds in force.
"""
from __future__ import annotations

import functools
import hashlib
import os
import stat
from pathlib import Path

from .. import __version__
from ..settings import limits, variables

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # compiler/: all of krc's code and data files
CODE_SUFFIXES = (".py", ".json", ".js")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tree_digest(folder: Path, suffixes: tuple[str, ...] = ()) -> str:
    """Every file below `folder` (relative path and bytes), in a stable order; an absent folder digests as empty."""
    digest = hashlib.sha256()
    if folder.is_dir():
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")):
            if suffixes and path.suffix not in suffixes:
                continue
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
            digest.update(sha256_hex(path.read_bytes()).encode() + b"\n")
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def krc_fingerprint() -> str:
    """krc's version and a digest of every code and data file of its package: results of other code are never
    reused. The package is krc's own install, so it is walked without tree_digest's care for links (every
    command pays for this walk)."""
    digest = hashlib.sha256(f"{__version__}\0".encode())
    found = []
    for folder, subfolders, files in os.walk(PACKAGE_DIR):
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        found += [os.path.join(folder, name) for name in files if name.endswith(CODE_SUFFIXES)]
    for path in sorted(found):
        with open(path, "rb") as handle:
            digest.update(os.path.relpath(path, PACKAGE_DIR).encode() + b"\0" + hashlib.sha256(handle.read()).digest())
    return digest.hexdigest()


def limit_settings() -> str:
    """The input bounds in force (KRC_MAX_...): a file accepted under one bound may be refused under another, so
    results are never reused across them."""
    return ";".join(f"{limit.variable}={variables.value(limit.variable)}" for limit in limits.ALL)


def path_digest(path: Path | str) -> str:
    """A file's or folder's content; "" when it does not exist (or is neither, such as a FIFO)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return ""
    if stat.S_ISREG(mode):
        with open(path, "rb") as handle:
            return sha256_hex(handle.read())
    return tree_digest(Path(path)) if stat.S_ISDIR(mode) else ""
