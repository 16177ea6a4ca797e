"""The digests of a golden/ folder's files, each file read only when it changed: a stat-signature memo.

`krc diff`, `krc check` and `krc golden` compare every environment's golden/ folder with the summary of its
compile-cache entry, file digest by file digest. Reading and hashing each folder's files is most of what an
unchanged environment costs them (500 environments: about 9,500 files). Like git's index, krc remembers for each
file the signature it had when hashed (device, inode, size, modification and change times in nanoseconds) beside
its digest, in its cache folder, and gives a file whose signature is unchanged the remembered digest
(cache/signatures.py: what a signature holds, and why a young one is never remembered).
"""
from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

from ..cache import CacheKind, cache_key
from ..cache.signatures import file_signature, settled
from ..output import folders

MEMO = CacheKind("tree-digests", 1)  # one entry per folder


def tree_digests(folder: Path, remember: bool = True) -> dict[str, str]:
    """sha256 of every file below `folder` (folders.tree_files: links refused), by path, sorted. `remember`:
    use and update the memo (off with --no-cache: every file is read)."""
    where = str(folder.absolute())
    memo_key = cache_key(where)
    known = _read_memo(memo_key, where) if remember else {}
    now = time.time_ns()
    digests: dict[str, str] = {}
    kept: dict[str, list[Any]] = {}
    for relative, entry in folders.tree_files(folder):
        signature = file_signature(entry.stat(follow_symlinks=False))
        remembered = known.get(relative)
        if remembered is not None and remembered[:5] == signature:
            digest = str(remembered[5])
        else:
            digest = hashlib.sha256(folders.read_file(entry)).hexdigest()
        digests[relative] = digest
        if settled(signature, now):
            kept[relative] = [*signature, digest]
    if remember and kept != known:
        MEMO.write_json(memo_key, {"folder": where, "files": kept})
    return dict(sorted(digests.items()))


def _read_memo(memo_key: str, where: str) -> dict[str, list[Any]]:
    """The remembered signatures of the folder at `where` (absolute); empty when absent, damaged or another
    folder's."""
    memo = MEMO.read_json(memo_key)
    try:
        if memo["folder"] != where:
            return {}
        files = memo["files"]
        return {str(k): v for k, v in files.items() if isinstance(v, list) and len(v) == 6} \
            if isinstance(files, dict) else {}
    except (OSError, ValueError, KeyError, TypeError):
        return {}
