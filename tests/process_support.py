"""Waiting for a process the test did not start itself (a helper krc keeps up) to end by itself."""
from __future__ import annotations

import time
from pathlib import Path


def has_ended(pid: int) -> bool:
    """Gone, or a zombie its parent has yet to reap (Linux's /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def wait_until_ended(pid: int, within: float = 30.0) -> bool:
    """Whether the process ended within `within` seconds (polled: the test goes on as soon as it has)."""
    deadline = time.monotonic() + within
    while not has_ended(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
