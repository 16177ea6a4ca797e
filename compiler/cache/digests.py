"""What cache keys are made of: digests of files, folders and krc's own code, and the input bounds in force.
"""
from __future__ import annotations

import functools
import hashlib
import os
import stat
import time
from pathlib import Path

from .. import __version__
from ..settings import limits, variables
from .signatures import file_signature, settled
from .store import CacheKind, cache_key

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


# krc's fingerprint under the signatures of its code files (signatures.py), one entry per install: a command whose
# code files all keep their signatures takes the fingerprint from here instead of reading and hashing every one
# (about 270 files: 9-14 ms of every command, a twentieth of a warm `krc argocd generate`).
FINGERPRINTS = CacheKind("fingerprint", 1)


@functools.lru_cache(maxsize=4)
def krc_fingerprint(memo: str | None = None) -> str:
    """krc's version and a digest of every code and data file of its package: results of other code are never
    reused. The package is krc's own install, so it is walked without tree_digest's care for links. `memo`: the
    cache folder whose memo of the files' signatures may answer, and keeps the answer (None: --no-cache)."""
    root = str(PACKAGE_DIR)
    paths = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        paths += [os.path.join(folder, name) for name in files if name.endswith(CODE_SUFFIXES)]
    paths.sort()
    names = [path[len(root) + 1:] for path in paths]  # each path relative to the package
    key = cache_key(__version__, root)
    signatures: list[list[int]] = []
    if memo is not None:
        try:
            signatures = [file_signature(os.stat(path)) for path in paths]
        except OSError:  # a file gone meanwhile: hashed below, which reports it
            memo = None
    signed = [[name, *signature] for name, signature in zip(names, signatures, strict=False)]
    if memo is not None:
        found = FINGERPRINTS.read_json(key, memo)
        if isinstance(found, dict) and found.get("files") == signed and isinstance(found.get("fingerprint"), str):
            return str(found["fingerprint"])
    digest = hashlib.sha256(f"{__version__}\0".encode())
    for name, path in zip(names, paths, strict=True):
        with open(path, "rb") as handle:
            digest.update(name.encode() + b"\0" + hashlib.sha256(handle.read()).digest())
    fingerprint = digest.hexdigest()
    now = time.time_ns()  # after the reads: a file changed within the racy window is hashed again next time
    if memo is not None and all(settled(signature, now) for signature in signatures):
        FINGERPRINTS.write_json(key, {"files": signed, "fingerprint": fingerprint}, memo)
    return fingerprint


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
