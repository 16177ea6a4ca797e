"""Entries of krc's cache that are verified before they are believed: the store the caches move onto.

An entry is one file: a header line naming the store's format, the entry's kind and the sha256 of the payload,
then the payload. It is believed only when
- it is a regular file reached without following a symlink, and its folders are not links either;
- it and its folder belong to this user and nobody else may write to them (a shared /tmp cache, a CI cache
  restored from another branch, a folder made world-writable);
- its header is this format's and this kind's, and the payload's digest matches.
Anything else is a miss: the caller computes the answer again and writes a fresh entry, never an error. An entry
in a folder others may write to is ignored with one warning per folder. Writes are atomic (a temporary file in
the same folder, renamed), mode 0600 in folders of mode 0700.

The Helm answers (charts/helm_template.py) are kept here; the other caches move onto it next (issue: one store).
"""
from __future__ import annotations

import hashlib
import os
import stat
import sys
import tempfile
from pathlib import Path

FORMAT = "krc-cache/1"
_WARNED: set[str] = set()


def _header(kind: str, payload: bytes) -> bytes:
    return f"{FORMAT} {kind} sha256={hashlib.sha256(payload).hexdigest()}\n".encode("ascii")


def _trusted(info: os.stat_result) -> bool:
    return info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _folder_trusted(folder: Path) -> bool:
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return False
    if _trusted(info):
        return True
    if str(folder) not in _WARNED:
        _WARNED.add(str(folder))
        sys.stderr.write(f"krc: warning: ignoring the cache in {folder}: another user may write to it; make it "
                         f"yours and not writable by others (chmod 700 {folder}), or set KRC_CACHE_DIR\n")
    return False


def read_entry(path: Path, kind: str) -> bytes | None:
    """The payload of a verified entry of `kind`, or None (missing, foreign, tampered with, or not trusted)."""
    if not (_folder_trusted(path.parent) and _folder_trusted(path.parent.parent)):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or not _trusted(info):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)
    header, newline, payload = data.partition(b"\n")
    if not newline or header + b"\n" != _header(kind, payload):
        return None
    return payload


def write_entry(path: Path, kind: str, payload: bytes) -> None:
    """Keep `payload` as a verified entry; best effort (a read-only or foreign cache only costs speed)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not _folder_trusted(path.parent):
            return
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".entry-")  # mode 0600
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(_header(kind, payload) + payload)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass
