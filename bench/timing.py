"""The timing helpers every benchmark uses: the best of several runs (the least disturbed by other load), and the
host's speed at the moment, to read a figure against."""
from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable

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
