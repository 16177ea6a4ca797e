"""How often a krc process (the command's, and each worker's) looks for reference cycles.

Python's collector runs a pass every 700 allocations by default. krc allocates millions of objects (parsed files,
rendered objects, engine answers) that form almost no cycles, and on a heap that imports alone make large: its
passes were 5-7 % of a one-environment render. Every 10,000 allocations, what cycles there are still go, a few
milliseconds later.
"""
from __future__ import annotations

import gc

THRESHOLDS = (10_000, 10, 10)


def collect_less() -> None:
    gc.set_threshold(*THRESHOLDS)
