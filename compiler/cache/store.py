"""Cache entries, verified before they are believed.

An entry is one file, <cache>/<kind>/<key>: a header line naming the store's format, the entry's kind and
record version, its key and the sha256 of the payload, then the payload. It is believed only when
- it is a regular file reached without following a symlink, and no folder from the cache's root down is a link;
- it and those folders belong to this user and nobody else may write to them (a shared /tmp cache, a CI cache
  restored from another branch, a folder made world-writable);
- its header is this format's, this kind's and this key's (an entry copied under another key is not), and the
  payload's digest matches.
Anything else is a miss: the caller computes the answer again and writes a fresh entry, never an error. A folder
others may write to is ignored with one warning. Writes go through atomic_file (a temporary file in the same
folder, renamed; nothing left behind on failure), entries mode 0600 in folders of mode 0700, best effort: a
read-only or full cache only costs speed.
"""
from __future__ import annotations

import hashlib
import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import jsontext
from ..files.atomic_file import write_atomically
from .location import cache_dir

FORMAT = "krc-cache/2"
_KEY = re.compile(r"[0-9a-f]{16,128}")
_WARNED: set[str] = set()
# The cache's root and kind folders found trusted in this command: the same for every entry of a kind, and only
# their owner could change them since. Forgotten as each command begins.
_TRUSTED_ABOVE: set[str] = set()


def forget_trusted_folders() -> None:
    """Check the cache's folders again from the next read on (a new command, in a process that runs several)."""
    _TRUSTED_ABOVE.clear()


def cache_key(*parts: str) -> str:
    """The one key recipe: the sha256 of every part the answer depends on, in order, NUL-separated."""
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def _owned(info: os.stat_result) -> bool:
    return info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _folder_trusted(folder: str) -> bool:
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return False
    if _owned(info):
        return True
    if folder not in _WARNED:
        _WARNED.add(folder)
        sys.stderr.write(f"krc: warning: ignoring the cache in {folder}: another user may write to it; make it "
                         f"yours and not writable by others (chmod 700 {folder}), or set KRC_CACHE_DIR\n")
    return False


def canonical_text(value: Any) -> str:
    """`value` as canonical JSON (sorted keys, no spaces): what an entry holds, and how a key names a document."""
    return jsontext.canonical(value)


def _dump(value: Any) -> bytes:
    return jsontext.canonical_bytes(value)


@dataclass(frozen=True)
class CacheKind:
    """One kind of entry: its folder's name, and the version of its record (bump it when what an entry holds or
    what its key covers changes: entries of another version are misses)."""

    name: str
    version: int

    def _header(self, key: str, payload: bytes) -> bytes:
        return (f"{FORMAT} {self.name}/{self.version} {key} "
                f"sha256={hashlib.sha256(payload).hexdigest()}\n").encode("ascii")

    def _folders(self, key: str, root: str) -> tuple[str, str]:
        """The cache's root and the kind's folder, which holds the entry. One folder per kind, not a fan-out by the
        key's first characters: a cold lint of 500 environments writes about 5,000 entries, and creating 5,000
        files spread over 2,000 folders took 0.4 s more CPU on ext4 than in nine folders."""
        if not _KEY.fullmatch(key):
            raise ValueError(f"not a cache key: {key!r}")
        return root, os.path.join(root, self.name)

    def entry_path(self, key: str, root: str | os.PathLike[str] | None = None) -> str:
        folder = self._folders(key, os.fspath(root or cache_dir()))[1]
        return os.path.join(folder, key)

    def exists(self, key: str, root: str | os.PathLike[str] | None = None) -> bool:
        """Whether an entry is there (not that it would be believed): a cheap question for planning work."""
        return os.path.isfile(self.entry_path(key, root))

    def read(self, key: str, root: str | os.PathLike[str] | None = None) -> bytes | None:
        """The payload of a verified entry, or None (missing, foreign, tampered with, or not trusted)."""
        folders = self._folders(key, os.fspath(root or cache_dir()))
        for folder in folders:
            if folder in _TRUSTED_ABOVE:
                continue
            if not _folder_trusted(folder):
                return None
            _TRUSTED_ABOVE.add(folder)
        try:
            fd = os.open(os.path.join(folders[1], key), os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or not _owned(info):
                return None
            data = os.read(fd, info.st_size + 1)  # entries are replaced whole, never grown: one read (and EOF)
        except OSError:
            return None
        finally:
            os.close(fd)
        if len(data) != info.st_size:
            return None
        header, newline, payload = data.partition(b"\n")
        if not newline or header + b"\n" != self._header(key, payload):
            return None
        return payload

    def write(self, key: str, payload: bytes, root: str | os.PathLike[str] | None = None) -> None:
        """Keep `payload` under `key`; best effort."""
        try:
            folder = self.trusted_folder(key, root)
            if folder is not None:
                write_atomically(Path(folder, key), self._header(key, payload) + payload, mode=0o600,
                                 parent_made=True)
        except OSError:
            pass

    def trusted_folder(self, key: str, root: str | os.PathLike[str] | None = None) -> str | None:
        """The folder `key`'s entry goes in, made when absent; None when it or a folder above it is a link or
        others may write to it (warned). OSError when it cannot be made."""
        folders = self._folders(key, os.fspath(root or cache_dir()))
        for folder in folders:  # made only when absent: most writes find both (one lstat each)
            if _folder_trusted(folder):
                continue
            if os.path.lexists(folder):
                return None
            os.makedirs(folder, mode=0o700, exist_ok=True)
            if not _folder_trusted(folder):
                return None
        return folders[1]

    def read_json(self, key: str, root: str | os.PathLike[str] | None = None) -> Any:
        """A verified entry's JSON value, or None (missing, foreign, tampered with, or not trusted)."""
        payload = self.read(key, root)
        if payload is None:
            return None
        try:
            return jsontext.loads(payload)
        except ValueError:
            return None

    def write_json(self, key: str, value: Any, root: str | os.PathLike[str] | None = None) -> None:
        """Keep `value` as canonical JSON (sorted keys, no spaces): the same value, the same bytes."""
        try:
            payload = _dump(value)
        except (TypeError, ValueError):
            return
        self.write(key, payload, root)
