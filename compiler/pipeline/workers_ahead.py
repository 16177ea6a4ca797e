"""Worker processes started before a command reads every environment's destination, so they import krc meanwhile.

A command compares each environment's Argo CD destination with every other's (the destination-collision rule), so
before any job runs, this process reads where every environment deploys: on a cold cache at 500 environments, the
main process alone parses 500 files while the other core waits, and only then starts the workers, which spend
their first second importing krc. When the destinations must be read and the command has enough environments to
want workers, `start` spawns them first; jobs.parallel then `take`s them when it wants that many, and a pool it
does not want is shut down (`discard`), as is one nobody took when the command ends.

A worker started here gets the same pool a parallel run starts (the same initializer), and the engine's
socket is exported while it is spawned, so it connects to this process's engine like the others. Its first task,
before any job, reads the project's vendored charts (`load_charts`): on a cold cache their CRDs are megabytes of
YAML to parse, which it does while this process reads the destinations; the facts it writes to the cache then
spare this process the same parse, the worker's own jobs find the charts in memory, and the engine, idle until the
first job, compiles their CRDs for validation meanwhile (crds_ahead).
"""
from __future__ import annotations

import atexit
import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .. import pipeline
from ..charts import crds_ahead, vendored
from ..diagnostics.problems import KrcError
from ..native import client, helper_process
from ..settings import collector, variables

if TYPE_CHECKING:  # the pool's module is loaded when a pool starts (pipeline.worker_pool)
    from .worker_pool import WorkerPool

_STARTED: list[tuple[WorkerPool, int]] = []  # at most one pool: (pool, its worker count)


def worker_setup() -> None:
    """A process of a pool (the main process too): no helper process (Ray's generator) stays idle after its answer,
    as one per process would add up to the peak memory; the collector as the command's process runs it."""
    helper_process.POOL.keep_idle(False)
    collector.collect_less()


def load_charts(vendor_dir: Path) -> None:
    """Every chart vendor/'s lock names, read as a job reads it (digest checked, CRDs parsed or their facts taken
    from the cache) and kept in this process, its CRDs sent to the engine to compile. A chart that does not load
    is left to the jobs that need it: their environments report why."""
    try:
        locked = sorted(vendored.read_lock(vendor_dir))
    except KrcError:
        return
    for name, version in locked:
        with contextlib.suppress(KrcError):
            crds_ahead.send(vendored.load_vendored_chart(vendor_dir, name, version).crds)


def start(count: int, initializer: Callable[[], None], vendor_dir: Path | None = None) -> None:
    """Spawn `count` worker processes now (none when `count` < 1, or when a pool was started already); given
    `vendor_dir`, the pool reads its charts before any job (load_charts)."""
    if count < 1 or _STARTED:
        return
    with spawning():
        pool = pipeline.new_pool(count, initializer)
    if vendor_dir is not None:
        pool.submit(load_charts, vendor_dir)
    _STARTED.append((pool, count))


@contextlib.contextmanager
def spawning() -> Iterator[None]:
    """While inside, the worker processes this process starts connect to its engine and get their Go runtime's
    settings (collector.go_runtime_for_workers, roomier in a command that leaves them room): a spawned process
    keeps the environment it was started with."""
    with client.shared_with_workers(), variables.exported(collector.go_runtime_for_workers(client.has_room())):
        yield


def take(count: int) -> WorkerPool | None:
    """The pool started ahead when it has `count` workers (the caller shuts it down); None otherwise (a pool of
    another size is shut down)."""
    if not _STARTED:
        return None
    pool, started = _STARTED.pop()
    if started == count:
        return pool
    pool.shutdown(wait=False, cancel_futures=True)
    return None


def discard() -> None:
    """Shut down a pool nobody took (the command wants no workers, or ended before its jobs)."""
    while _STARTED:
        _STARTED.pop()[0].shutdown(wait=False, cancel_futures=True)


atexit.register(discard)
