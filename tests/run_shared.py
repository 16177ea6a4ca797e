"""Folders made once per test run and shared by its test processes (pytest-xdist workers): the vendored charts,
the parsed-charts and tool-answers caches, the downloaded Helm wheel.

Session fixtures run once per test process; what they build here is built by the first process that asks, while
the others wait for it (a file lock), then read it. Each folder is built under a temporary name and renamed into
place, so a reader never sees half of it; tests only ever read or copy these folders. The run's folder is made by
the main pytest process (tests/conftest.py) and removed when the run ends, so one run never reads another's.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

# Set by the main pytest process to a folder of its own; its xdist workers inherit it
SHARED_VARIABLE = "KRC_TEST_SHARED_DIR"


def run_folder(variable: str, prefix: str) -> bool:
    """$variable names a folder of this test run: made here when unset, i.e. in the main pytest process (True: this
    process removes it when the run ends), and inherited by its xdist workers and by a pytest a test starts."""
    if os.environ.get(variable):
        return False
    os.environ[variable] = tempfile.mkdtemp(prefix=prefix)
    return True


def once(name: str, build: Callable[[Path], None]) -> Path:
    """The run's folder `name`: `build` fills it (given an empty folder) in the first process that asks."""
    root = Path(os.environ[SHARED_VARIABLE])
    target = root / name
    with (root / f".{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when build raises
        if not target.is_dir():
            building = root / f".{name}.building"
            shutil.rmtree(building, ignore_errors=True)  # left by a build that failed
            building.mkdir()
            build(building)
            building.rename(target)
    return target
