"""The one timing helper every benchmark uses: the best of several runs (the least disturbed by other load)."""
from __future__ import annotations

import time
from collections.abc import Callable


def best_of(runs: int, work: Callable[[], object]) -> float:
    """Seconds of the fastest of `runs` calls of `work`."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)
