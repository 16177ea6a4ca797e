"""The digests of a project's input files (its environment files above all), each file read only when it changed.

Every command keys each environment's results by the digest of its file and of every layer it extends, so a
command over 500 environments read and hashed 500 files before it knew that nothing had changed. As golden/'s
digests are (tree_digests.py, git's index), each file's digest is remembered beside its signature (device, inode,
size, modification and change times), one memo per project in the cache folder, and a file whose signature is
unchanged gets the remembered digest (cache/signatures.py: why a changed file always shows, and why a young
signature is never remembered). A young file's digest is kept without its signature: it is hashed again by every
command until its signature can be kept, and a command tells an edit from a file merely written recently.
"""
from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..cache import CacheKind, cache_key
from ..cache.digests import path_digest
from ..cache.signatures import file_signature, settled

MEMO = CacheKind("input-digests", 1)  # one entry per project
MAX_REMEMBERED = 20_000  # files; a memo past this starts again (a project renaming files all day)


class InputDigests:
    """Digests of files by absolute path as text, from the project's memo when their signatures match."""

    def __init__(self, root: str, enabled: bool, folder: Path | None = None) -> None:
        """`root`: the project's resolved root; `folder`: the cache's (default: krc's cache dir)."""
        self.enabled = enabled
        self.root = root
        self.folder = folder
        self.key = cache_key("input-digests", root)
        self._known: dict[str, list[Any]] | None = None if enabled else {}  # the memo, read when first asked
        self._basis = ""  # what the command that kept the memo said its compiles rested on (save)
        # what this command hashed: [signature..., digest], the signature None when too young to be trusted
        self.changed: dict[str, list[Any]] = {}
        # every answer of this run, by path (files do not change under one command): hundreds of environments'
        # layers are asked for several times each
        self._answered: dict[str, str] = {}
        self.now = time.time_ns()

    @property
    def known(self) -> dict[str, list[Any]]:
        if self._known is None:
            self._known = self._read()
        return self._known

    @property
    def basis(self) -> str:
        """The basis the last command that kept the memo gave (save); "" when unknown."""
        _ = self.known
        return self._basis

    def _read(self) -> dict[str, list[Any]]:
        memo = MEMO.read_json(self.key, self.folder)
        try:
            if memo["root"] != self.root or not isinstance(memo["files"], dict):
                return {}
            basis = memo.get("basis")
            self._basis = basis if isinstance(basis, str) else ""
            return {str(k): v for k, v in memo["files"].items() if isinstance(v, list) and len(v) == 6}
        except (KeyError, TypeError, AttributeError):
            return {}

    def digest(self, path: str) -> str:
        """A file's or folder's content digest (cache.digests.path_digest); "" when it does not exist. Worked out
        once per run."""
        found = self._answered.get(path)
        if found is None:
            found = self._answered[path] = self._digest(path)
        return found

    def _digest(self, path: str) -> str:
        try:
            status = os.stat(path)
        except (OSError, ValueError):
            return ""
        if not stat.S_ISREG(status.st_mode):
            return path_digest(path)
        signature = file_signature(status)
        remembered = self.known.get(path)
        if remembered is not None and remembered[:5] == signature and isinstance(remembered[5], str):
            return remembered[5]
        digest = path_digest(path)
        if self.enabled and digest:  # a young signature is not kept, its digest is (to tell an edit: edited)
            self.changed[path] = [*(signature if settled(signature, self.now) else [None] * 5), digest]
        return digest

    def edited_among(self, paths: Iterable[str], most: int | None = None) -> list[str]:
        """Of `paths`, in order, those `edited` (each digested first), up to `most` of them."""
        found = []
        for path in paths:
            self.digest(path)
            if self.edited(path):
                found.append(path)
                if most is not None and len(found) >= most:
                    break
        return found

    def edited(self, path: str) -> bool:
        """Whether this command found the file at `path` new or with other bytes than the last command that hashed
        it (always False without the cache: nothing is known)."""
        found = self.changed.get(path)
        if found is None:
            return False
        before = self.known.get(path)
        return before is None or before[5] != found[5]

    def save(self, basis: str = "") -> None:
        """Keep what this command read anew, and `basis`: what every compile of this command rests on besides
        the files (best effort, like every cache write)."""
        if basis == self.basis and all(self.known.get(path) == entry for path, entry in self.changed.items()):
            return
        files = {**self.known, **self.changed}
        if len(files) > MAX_REMEMBERED:
            files = dict(self.changed)
        MEMO.write_json(self.key, {"root": self.root, "files": files, "basis": basis}, self.folder)
        self._known, self._basis, self.changed = files, basis, {}
