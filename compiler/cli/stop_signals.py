"""SIGINT and SIGTERM stop any command at once, through the same exits as an error.

Python's default for SIGTERM ends the process where it stands, skipping exit handlers (the engine and temporary
folders stay), and its KeyboardInterrupt is what click reports as "Aborted!", exit 1, the exit code of findings.
Here either signal raises SystemExit(128 + signal), as a shell reports a process the signal ended: `finally`
blocks and exit handlers run (the project lock is released, temporary folders are removed, the engine is
stopped), and a write interrupted between two steps leaves what the next run cleans up (output.py). Worker
processes compiling for this run are stopped with it, so it never waits for their templates to end.
"""
from __future__ import annotations

import signal
import sys
import threading
from types import FrameType


def _stop(signum: int, frame: FrameType | None) -> None:
    for other in (signal.SIGINT, signal.SIGTERM):  # a second signal must not interrupt the exit itself
        signal.signal(other, signal.SIG_IGN)
    pool = sys.modules.get("compiler.pipeline.worker_pool")  # loaded only by a command that started workers
    if pool is not None:
        pool.terminate_all()
    try:
        sys.stderr.write(f"krc: stopped by {signal.Signals(signum).name}; nothing was half-written\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    raise SystemExit(128 + signum)


def install() -> None:
    """For the `krc` executable only (in-process callers keep their own handlers); from the main thread."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _stop)
        signal.signal(signal.SIGTERM, _stop)
