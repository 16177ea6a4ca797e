"""The pool of worker processes a command compiles in (jobs.parallel, workers_ahead.start). A module of its own,
loaded when a pool starts (the pipeline's names are imported when first used): multiprocessing and the process pool
took 13-16 ms of a command's start, and a command compiling a few environments (most pull requests) starts none."""
from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor


def new_pool(count: int, initializer: Callable[[], None]) -> ProcessPoolExecutor:
    """`count` worker processes, each started fresh ('spawn': the Go runtime of gojsonnet does not survive a fork)
    and running `initializer` before its first task."""
    return ProcessPoolExecutor(max_workers=count, mp_context=multiprocessing.get_context("spawn"),
                               initializer=initializer)
