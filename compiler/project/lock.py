"""One writer at a time per project: `project_lock` around every run that writes rendered/ or golden/.

Concurrent runs (CI jobs, a developer's two terminals, Argo CD's repo-server) wait for the lock instead of racing
on the same folders. A run that finds it held says so in one line, naming the holder (each holder writes its pid
into the lock file), and waits at most KRC_LOCK_SECONDS, then gives up with exit 2.
"""
from __future__ import annotations

import contextlib
import fcntl  # POSIX only: krc runs on Linux and macOS (CI, the Argo CD sidecar)
import os
import sys
import time
from collections.abc import Iterator

from ..diagnostics.problems import KrcError, Location
from ..settings import limits
from .paths import Project

LOCK_FILE = ".krc.lock"


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder(fd: int) -> str:
    """Who holds the lock, as its holder wrote it into the file (its pid), for the messages of a waiting run."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        text = ""
    return f"process {text}" if text.isdigit() else "another krc run"


@contextlib.contextmanager
def project_lock(project: Project) -> Iterator[None]:
    """One writer at a time per project: concurrent runs wait here instead of racing on the same folders. A run
    that finds the lock held says so in one line, naming the holder (the pid each holder writes into the lock
    file), and waits at most KRC_LOCK_SECONDS; the lock goes with the holder's last descriptor, however it ends."""
    path = project.root / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as err:
        raise KrcError(f"cannot open {LOCK_FILE} in {project.root} ({err.strerror or err}); make the folder "
                       "writable (or run where it is) and run again") from None
    try:
        if not _try_lock(fd):
            bound = limits.LOCK_SECONDS.value
            holder = _holder(fd)
            sys.stderr.write(f"krc: {LOCK_FILE} is held by {holder}; waiting up to {bound} s for it to finish\n")
            sys.stderr.flush()
            deadline = time.monotonic() + bound
            while not _try_lock(fd):
                if time.monotonic() >= deadline:
                    raise KrcError(limits.LOCK_SECONDS.exceeded(f"waiting for the lock held by {_holder(fd)}") +
                                   "; or stop that run", Location(LOCK_FILE))
                time.sleep(0.05)
        with contextlib.suppress(OSError):  # the holder's name for a waiting run; the lock works without it
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock; the file stays (removing it would race with the next waiter)
