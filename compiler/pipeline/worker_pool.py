"""The pool of worker processes a command compiles in (jobs.parallel, workers_ahead.start): krc's own, not
multiprocessing's. A module of its own, loaded when a pool starts (the pipeline's names are imported when first
used): a command compiling a few environments (most pull requests) starts none.

Each worker is a fresh Python process (the Go runtime of gojsonnet does not survive a fork) running
worker_process.main, fed calls over a pipe of its own. multiprocessing's pool with 'spawn' also starts its resource
tracker, a third process of about 13 MB alive for the whole command, and `krc lint`'s peak memory is every process at
its highest at once. Here calls go, in the order submitted, to the worker with the fewest under way, at most two
each (the one it runs and the next, already in its pipe; one each once few are left: WorkerPool._room), and the
rest wait in the pool, where a caller may still cancel one; a thread per worker writes its calls (a
job's pickle can be larger than a pipe holds: the caller never waits for a busy worker to read) and one reads its
answers. A worker that ends before answering fails its calls and the pool's later ones with WorkerEnded.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import queue
import subprocess
import sys
import threading
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import wait as wait_all
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from . import worker_process

_UNDER_WAY_AT_MOST = 2  # calls sent to one worker and not yet answered (see WorkerPool._room)
_ROOT = str(Path(worker_process.__file__).resolve().parents[2])  # the folder holding this `compiler` package


class WorkerEnded(RuntimeError):
    """A worker process ended before it answered a call (killed, out of memory, or crashed)."""


class WorkerTraceback(Exception):
    """Where a worker's call failed, attached as the cause of the exception it raised (shown under KRC_DEBUG=1)."""


@dataclass(frozen=True)
class _Call:
    call_id: int
    future: Future[Any]
    fn: Callable[..., Any]
    args: tuple[Any, ...]


@dataclass(eq=False)
class _Worker:
    process: subprocess.Popen[bytes]
    outbox: queue.SimpleQueue[_Call | list[str] | Callable[[], None] | None]  # the path, the setup, calls
    under_way: dict[int, Future[Any]] = field(default_factory=dict)
    closing: bool = False


class WorkerPool:
    """`count` worker processes, started now, each running `initializer` before its first call."""

    def __init__(self, count: int, initializer: Callable[[], None]) -> None:
        self._lock = threading.Lock()
        self._waiting: deque[_Call] = deque()
        self._next_id = 0
        self._closed = False
        self._ended: str | None = None  # why the pool can take no more calls: a worker ended
        self._workers: list[_Worker] = []
        _POOLS.add(self)
        try:
            for _ in range(count):
                self._workers.append(self._start(list(sys.path), initializer))
        except BaseException:  # a worker that cannot start (no process left, a full descriptor table)
            self.shutdown(wait=False, cancel_futures=True)
            raise

    def _start(self, module_path: list[str], initializer: Callable[[], None]) -> _Worker:
        requests_in, requests_out = os.pipe()
        answers_in, answers_out = os.pipe()
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", worker_process.BOOT, _ROOT, str(requests_in), str(answers_out)],
                stdin=subprocess.DEVNULL, pass_fds=(requests_in, answers_out))
        except BaseException:
            for end in (requests_out, answers_in):
                os.close(end)
            raise
        finally:
            os.close(requests_in)
            os.close(answers_out)
        worker = _Worker(process, queue.SimpleQueue())
        worker.outbox.put(module_path)
        worker.outbox.put(initializer)
        threading.Thread(target=self._write, args=(worker, open(requests_out, "wb")), daemon=True,
                         name=f"krc-worker-{process.pid}-calls").start()
        threading.Thread(target=self._read, args=(worker, open(answers_in, "rb")), daemon=True,
                         name=f"krc-worker-{process.pid}-answers").start()
        return worker

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the worker pool was shut down")
            if self._ended is not None:
                raise WorkerEnded(self._ended)
            self._next_id += 1
            call = _Call(self._next_id, future, fn, args)
            self._waiting.append(call)  # sent in the order submitted, whatever room a worker has meanwhile
            self._next(min(self._workers, key=lambda w: len(w.under_way)))
        return future

    def _room(self) -> int:
        """Under the lock: how many calls a worker may have under way. Two while more calls wait than there are
        workers, so a worker starts its next call as soon as it answers one; one near the end, so the last calls
        wait here, where the caller may take one back (cancel it) and run it itself, not in a busy worker's pipe
        while the caller has nothing to do (jobs._shared)."""
        waiting = sum(not call.future.cancelled() for call in self._waiting)
        return _UNDER_WAY_AT_MOST if waiting > len(self._workers) else 1

    def _send(self, worker: _Worker, call: _Call) -> None:
        """Under the lock: the call to `worker`, unless it was cancelled while waiting."""
        if call.future.set_running_or_notify_cancel():
            worker.under_way[call.call_id] = call.future
            worker.outbox.put(call)

    def _next(self, worker: _Worker) -> None:
        """Under the lock, a call submitted or `worker` having answered: the calls waiting first, while `worker` has
        room for them, or the end of its pipe when the pool is closed and nothing is left for it."""
        while self._waiting and len(worker.under_way) < self._room():
            self._send(worker, self._waiting.popleft())
        if self._closed and not self._waiting and not worker.under_way and not worker.closing:
            worker.closing = True
            worker.outbox.put(None)

    def _write(self, worker: _Worker, pipe: BinaryIO) -> None:
        """The worker's calls into its pipe, in order, until the pool closes it (or the worker is gone)."""
        try:
            while (item := worker.outbox.get()) is not None:
                if isinstance(item, _Call):
                    try:
                        call_id, data = item.call_id, pickle.dumps((item.fn, item.args), pickle.HIGHEST_PROTOCOL)
                    except Exception as err:  # noqa: BLE001 - a call that does not pickle fails alone
                        self._answered(worker, item.call_id, (False, (err, "")))
                        continue
                else:
                    call_id, data = 0, pickle.dumps(item, pickle.HIGHEST_PROTOCOL)
                worker_process.write_frame(pipe, call_id, data)
        except OSError:  # the worker is gone: its reader reports it
            pass
        finally:
            with contextlib.suppress(OSError):  # what a gone worker left unread is dropped with the pipe
                pipe.close()

    def _read(self, worker: _Worker, pipe: BinaryIO) -> None:
        """The worker's answers, each settling its call, until the worker ends."""
        with pipe:
            while (frame := worker_process.read_frame(pipe)) is not None:
                try:
                    outcome = pickle.loads(frame[1])
                except Exception as err:  # noqa: BLE001 - an answer that does not load fails its call alone
                    outcome = (False, (RuntimeError(f"a worker's answer could not be read: {err}"), ""))
                self._answered(worker, frame[0], outcome)
        status = worker.process.wait()
        with self._lock:
            lost = list(worker.under_way.values())
            worker.under_way.clear()
            if lost or not worker.closing:
                self._ended = (f"a krc worker process (pid {worker.process.pid}) ended with status {status} before "
                               "it answered; run again, or with --workers 1 to compile in one process")
                lost.extend(call.future for call in self._waiting if call.future.set_running_or_notify_cancel())
                self._waiting.clear()
        for future in lost:
            future.set_exception(WorkerEnded(self._ended or ""))

    def _answered(self, worker: _Worker, call_id: int, outcome: tuple[bool, Any]) -> None:
        with self._lock:
            future = worker.under_way.pop(call_id)
            self._next(worker)
        ok, value = outcome
        if ok:
            future.set_result(value)
            return
        err, trace = value
        if trace:
            err.__cause__ = WorkerTraceback(trace)
        future.set_exception(err)

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        """No more calls; waiting calls cancelled when `cancel_futures`. Each worker's pipe closes once its calls
        are answered and the worker then ends; with `wait`, return when every call is answered and
        every worker has ended."""
        with self._lock:
            self._closed = True
            if cancel_futures:
                for call in self._waiting:
                    call.future.cancel()
                self._waiting.clear()
            under_way = [call.future for call in self._waiting]
            for worker in self._workers:
                under_way.extend(worker.under_way.values())
                self._next(worker)
        if wait:
            wait_all(under_way)
            self._ended_all()

    def _ended_all(self) -> None:
        """Once every worker has ended (reaped: no process left behind)."""
        for worker in self._workers:
            worker.process.wait()

    def terminate(self) -> None:
        """Stop every worker at once (the command is stopping)."""
        for worker in self._workers:
            if worker.process.poll() is None:
                worker.process.terminate()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc_info: object) -> None:
        """Every call answered; or, leaving on an exception (the run is over), the workers stopped at once rather
        than waited for (a template may run until its deadline)."""
        if exc_type is None:
            self.shutdown(wait=True)
            return
        self.shutdown(wait=False, cancel_futures=True)
        self.terminate()
        self._ended_all()


_POOLS: weakref.WeakSet[WorkerPool] = weakref.WeakSet()


def terminate_all() -> None:
    """Every pool's workers stopped at once (cli.stop_signals)."""
    for pool in list(_POOLS):
        pool.terminate()


def _reap_all() -> None:
    """At exit, every pool closed and its workers waited for (a worker still running a call ends with it)."""
    for pool in list(_POOLS):
        pool.shutdown(wait=False, cancel_futures=True)
        pool._ended_all()


atexit.register(_reap_all)


def new_pool(count: int, initializer: Callable[[], None]) -> WorkerPool:
    """`count` worker processes, each started fresh and running `initializer` before its first call."""
    return WorkerPool(count, initializer)
