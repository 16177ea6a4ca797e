"""The timing helpers every benchmark uses: the best of several runs (the least disturbed by other load), and the
host's speed at the moment, to read a figure against."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

# A fixed pure-Python workload: the same code in a fresh interpreter, so its CPU time moves only with the host (a
# shared machine's speed was seen to move by half within minutes, and every figure beside it moved with it).
_HOST_LOOP = "import time\nt = time.process_time()\ns = 0\nfor i in range(3_000_000): s += i * i\n" \
    "print(time.process_time() - t)"


def best_of(runs: int, work: Callable[[], object]) -> float:
    """Seconds of the fastest of `runs` calls of `work`."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def host_loop_seconds() -> float:
    """CPU seconds of _HOST_LOOP in a fresh interpreter: larger when the host is slower."""
    done = subprocess.run([sys.executable, "-c", _HOST_LOOP], capture_output=True, text=True, check=True)
    return float(done.stdout)


# ext4 without a journal keeps a removed inode from reuse while its inode table block is unwritten (360 s) and for
# 60 s after it is written back (fs/ext4/ialloc.c, recently_deleted): every file created meanwhile in that block
# group first steps over each such inode. A cold `krc lint` of 500 environments right after 11,500 files were
# removed took 20.5 CPU-s against 19.0 after the minute (2.6 against 1.8 of them in the kernel).
_REUSE_WAIT = 61.0


def unjournaled_ext4(folder: Path, mountinfo: str = "/proc/self/mountinfo", journals: str = "/proc/fs/jbd2") -> bool:
    """Whether `folder` is on an ext4 file system without a journal: the mount holding it (the longest mount point
    that is a prefix of it) is ext4 on a device with no journal in `journals` (jbd2 lists each as <device>-8)."""
    best: tuple[int, str, str] = (-1, "", "")
    target = os.path.realpath(folder)
    try:
        with open(mountinfo, encoding="utf-8") as mounts:
            lines = mounts.read().splitlines()
    except OSError:  # not Linux: no ext4 to wait for
        return False
    for line in lines:
        fields = line.split()
        point, rest = fields[4], fields[fields.index("-") + 1:]
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > best[0]:
            best = (len(point), rest[0], rest[1])
    _, kind, source = best
    return kind == "ext4" and source.startswith("/dev/") and \
        not os.path.isdir(os.path.join(journals, f"{os.path.basename(source)}-8"))


def settle_removals(folder: Path, removed_at: float | None) -> None:
    """Before a timed run that creates thousands of files in `folder`: if thousands were removed there at
    `removed_at` (time.monotonic()) on a file system that keeps removed inodes from reuse for a while, write them
    back and wait out the minute, so a figure does not carry the removals of the run before it (Kapitan removes its
    compile folder; a template edit replaces every rendered folder)."""
    if removed_at is None or not unjournaled_ext4(folder):
        return
    os.sync()
    time.sleep(max(0.0, removed_at + _REUSE_WAIT - time.monotonic()))
