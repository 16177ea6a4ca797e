"""One worker process of krc's pool (worker_pool.WorkerPool): the calls its pool sends, run one at a time.

The process is started as `python -c BOOT ROOT REQUESTS ANSWERS`: BOOT puts ROOT (the folder holding the `compiler`
package the command runs) first on the path and calls `main`. Calls come in on the REQUESTS pipe and their answers
go out on the ANSWERS pipe, each a frame: the call's number and the pickle's length, then the pickle (so a call
whose pickle does not load still fails as itself). Standard output and error stay the command's,
as libraries may print. The first two frames are the command's module path and the function each worker runs before
its first call. The worker ends when its requests' pipe closes (the pool is done, or the command ended, however it
ended) and ignores SIGINT: the command stops its workers itself (cli.stop_signals).

This module imports only the standard library: it loads before the command's path is known.
"""
from __future__ import annotations

import gc
import os
import pickle
import signal
import struct
import sys
import traceback
from typing import Any, BinaryIO

# how a worker is started: `python -c BOOT ROOT REQUESTS ANSWERS`
BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from compiler.pipeline.worker_process import main; main()"
_HEADER = struct.Struct("!QQ")  # the call's number, the pickle's length


def write_frame(pipe: BinaryIO, call_id: int, data: bytes) -> None:
    pipe.write(_HEADER.pack(call_id, len(data)))
    pipe.write(data)
    pipe.flush()


def read_frame(pipe: BinaryIO) -> tuple[int, bytes] | None:
    """The next frame: its call's number and pickle; None at the end of the pipe (a frame cut short is an end)."""
    header = pipe.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    call_id, length = _HEADER.unpack(header)
    data = pipe.read(length)
    return (call_id, data) if len(data) == length else None


def failure(err: BaseException) -> tuple[BaseException, str]:
    """An exception as it travels back: the exception (or, when it does not pickle, a RuntimeError naming it) and
    its traceback's text, which the pool attaches as its cause (shown under KRC_DEBUG=1)."""
    text = "".join(traceback.format_exception(err))
    try:
        pickle.loads(pickle.dumps(err, pickle.HIGHEST_PROTOCOL))
    except Exception:  # noqa: BLE001 - any exception that does not survive the trip is named instead
        return RuntimeError(f"{type(err).__name__}: {err}"), text
    return err, text


def answer(call: bytes) -> bytes:
    """The pickled answer to one pickled call (a function and its arguments): (True, value) or (False, failure)."""
    try:
        fn, args = pickle.loads(call)
        outcome: tuple[bool, Any] = (True, fn(*args))
    except BaseException as err:  # noqa: BLE001 - every failure goes back to the caller, as a thread pool's would
        outcome = (False, failure(err))
    try:
        return pickle.dumps(outcome, pickle.HIGHEST_PROTOCOL)
    except Exception as err:  # noqa: BLE001 - a value that does not pickle fails its call, not the worker
        return pickle.dumps((False, failure(RuntimeError(f"its answer could not be sent back: {err}"))),
                            pickle.HIGHEST_PROTOCOL)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with open(int(sys.argv[2]), "rb") as requests, open(int(sys.argv[3]), "wb") as answers:
        path, setup = read_frame(requests), read_frame(requests)
        if path is None or setup is None:
            return
        sys.path[:] = pickle.loads(path[1])  # before the setup function's module is imported
        pickle.loads(setup[1])()
        while (frame := read_frame(requests)) is not None:
            call_id, call = frame
            data = answer(call)
            try:
                write_frame(answers, call_id, data)
            except BrokenPipeError:  # the command is gone: nobody to answer
                os._exit(0)
    # the command waits for its workers to end: what this one built (parsed charts, caches) is left to the system,
    # not collected on the way out (as cli.run does for the command's own process); exit handlers still run
    gc.freeze()
