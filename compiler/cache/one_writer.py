"""One process at a time works out a costly entry: the others wait for it, then read what it wrote.

A cold run's processes all start by reading the same charts, and a chart's CRDs take a third of a second of CPU
to parse: without this, the command's process and a worker each parsed the same chart side by side. The lock is
a `flock` on a file beside the entry (<cache>/<kind>/.<key>.lock, mode 0600, in the entry's trusted
folder), so it also holds between two krc commands sharing a cache, and it goes with its holder however that
ends. Best effort, like every cache write: no trusted folder, no lock file, or a holder that keeps it past
`WAIT_SECONDS` (a stuck command), and the caller works the entry out itself.
"""
from __future__ import annotations

import contextlib
import fcntl  # POSIX only, as compiler/project/lock.py
import os
import time
from collections.abc import Iterator

from .store import CacheKind

WAIT_SECONDS = 30.0
_POLL_SECONDS = 0.02


@contextlib.contextmanager
def one_at_a_time(kind: CacheKind, key: str, root: str | os.PathLike[str] | None = None,
                  wait_seconds: float = WAIT_SECONDS) -> Iterator[None]:
    """Inside, no other process is inside for the same entry (see above): check for the entry again once in."""
    fd = _lock_file(kind, key, root)
    if fd is None:
        yield
        return
    try:
        deadline = time.monotonic() + wait_seconds
        while not _try_lock(fd) and time.monotonic() < deadline:
            time.sleep(_POLL_SECONDS)
        yield
    finally:
        os.close(fd)  # releases the lock; the file stays (removing it would race with the next waiter)


def _lock_file(kind: CacheKind, key: str, root: str | os.PathLike[str] | None) -> int | None:
    try:
        folder = kind.trusted_folder(key, root)
        if folder is None:
            return None
        return os.open(os.path.join(folder, f".{key}.lock"),
                       os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    except (OSError, ValueError):
        return None


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return True  # no locking on this file system: go on without it
    return True
