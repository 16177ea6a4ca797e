"""Talking to the engine: one process per krc process, JSON lines over two pipes of its own, answers by id.

Libraries inside the engine print to stdout and stderr, so the protocol has dedicated pipes (--requests-fd,
--answers-fd); what the engine prints goes to a temporary file kept for the error message. Requests are
answered several at a time and out of order: a caller submits a batch (every chart of a run) and takes each
answer when it needs it. A reader thread hands answers to their requests.

Bounds: every answer has a deadline (the engine is killed when it passes, and started again for the next
request); the engine's memory is bounded by the Go runtime's soft limit (GOMEMLIMIT) and a hard one the engine
enforces itself (it exits, naming the limit, rather than taking the machine down). A forked child (a worker
process) never talks to its parent's engine: it starts its own.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import os
import subprocess
import tempfile
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .. import limits
from ..problems import KrcError, Location
from .binary import engine_binary

_STDERR_TAIL = 4000
# what the engine inherits of krc's environment: enough to run, nothing that changes what the libraries do
_INHERITED = ("PATH", "LANG", "LC_ALL", "TMPDIR")
# the engine's exit status when it stopped itself at its hard memory limit (engine/limits.go)
MEMORY_EXIT = 86


class EngineEnded(Exception):
    """The engine process ended (or spoke nonsense) before it answered: krc's bug or the engine's, exit 3."""

    def __init__(self, detail: str, *, over_memory: bool = False) -> None:
        super().__init__(detail)
        self.detail = detail
        self.over_memory = over_memory


class EngineTimeout(Exception):
    """No answer within the deadline; the engine has been killed."""


@dataclass(frozen=True)
class Answer:
    """An engine answer: a result, or the error the op reported about its input."""

    result: Any
    error: str | None


class EngineProcess:
    def __init__(self, binary: Path) -> None:
        requests_read, requests_write = os.pipe()
        answers_read, answers_write = os.pipe()
        self._log = tempfile.TemporaryFile()
        env = {name: os.environ[name] for name in _INHERITED if name in os.environ}
        env.update(GOMEMLIMIT=f"{limits.ENGINE_MEMORY_MB.value}MiB",
                   KRC_ENGINE_MAX_MEMORY_MB=str(limits.ENGINE_MEMORY_MB.value * 3 // 2), HOME="/nonexistent")
        try:
            self._process = subprocess.Popen(
                [str(binary), "--requests-fd", str(requests_read), "--answers-fd", str(answers_write)],
                pass_fds=(requests_read, answers_write), stdin=subprocess.DEVNULL, stdout=self._log,
                stderr=self._log, env=env, cwd="/")
        except OSError as err:
            for fd in (requests_read, requests_write, answers_read, answers_write):
                os.close(fd)
            raise KrcError(f"the krc engine {binary} could not start ({err.strerror or err}); check the file, "
                           "or rebuild it with 'make engine'") from None
        os.close(requests_read)
        os.close(answers_write)
        self._requests: IO[bytes] = os.fdopen(requests_write, "wb")
        self._answers: IO[bytes] = os.fdopen(answers_read, "rb")
        self._lock = threading.Lock()  # the requests under way and the id counter
        self._write_lock = threading.Lock()  # one request line at a time on the pipe
        self._pending: dict[int, Future[Answer]] = {}
        self._next_id = 1
        self._ended: EngineEnded | None = None
        self.pid = os.getpid()
        self._reader = threading.Thread(target=self._read_answers, name="krc-engine-answers", daemon=True)
        self._reader.start()

    def submit(self, op: str, args: dict[str, Any]) -> Future[Answer]:
        future: Future[Answer] = Future()
        with self._lock:
            if self._ended is not None:
                future.set_exception(self._ended)
                return future
            ident, self._next_id = self._next_id, self._next_id + 1
            self._pending[ident] = future
        line = json.dumps({"id": ident, "op": op, "args": args}, separators=(",", ":"),
                          ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n"
        # Written outside the lock the reader thread takes for each answer: while a batch is written, the engine
        # answers the first requests, and it stops reading until those answers are read.
        with self._write_lock:
            try:
                self._requests.write(line)
                self._requests.flush()
            except (OSError, ValueError):
                pass  # the reader thread sees the engine end and fails every request under way
        return future

    def _read_answers(self) -> None:
        try:
            for line in self._answers:
                try:
                    message = json.loads(line)
                    ident = message["id"]
                except (ValueError, KeyError, TypeError):
                    message, ident = None, None
                if not isinstance(message, dict) or not isinstance(ident, int) or ident == 0:
                    shown = line[:300].decode(errors="replace").strip()
                    self._end(EngineEnded(f"the engine answered something krc did not ask: {shown}"))
                    return
                with self._lock:
                    future = self._pending.pop(ident, None)
                if future is not None:
                    error = message.get("error")
                    future.set_result(Answer(message.get("result"), error if isinstance(error, str) else None))
        except (OSError, ValueError):
            pass
        self._end(None)

    def _end(self, why: EngineEnded | None) -> None:
        """Fail every request under way: the engine ended, or must not be trusted any more."""
        if why is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout=5)
            code = self._process.poll()
            why = EngineEnded(f"the krc engine ended (exit {code}): {self.log_tail()}",
                              over_memory=code == MEMORY_EXIT)
        with self._lock:
            self._ended = self._ended or why
            pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(self._ended)
        self.kill()

    def alive(self) -> bool:
        return self._ended is None and self._process.poll() is None

    def log_tail(self) -> str:
        self._log.seek(0, os.SEEK_END)
        self._log.seek(max(0, self._log.tell() - _STDERR_TAIL))
        lines = self._log.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else "no message"

    def kill(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        with contextlib.suppress(OSError):
            self._requests.close()

    def close(self) -> None:
        """End the engine once it has answered what is under way (closing its request pipe ends it)."""
        with contextlib.suppress(OSError):
            self._requests.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()


_ENGINE: EngineProcess | None = None
_ENGINE_LOCK = threading.Lock()


def _engine() -> EngineProcess:
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None or _ENGINE.pid != os.getpid() or not _ENGINE.alive():
            if _ENGINE is not None and _ENGINE.pid == os.getpid():
                _ENGINE.kill()
            _ENGINE = EngineProcess(engine_binary())
        return _ENGINE


@atexit.register
def close_engine() -> None:
    global _ENGINE
    with _ENGINE_LOCK:
        engine, _ENGINE = _ENGINE, None
    if engine is not None and engine.pid == os.getpid():
        engine.close()


class Pending:
    """One request under way; `answer` waits for it (at most `timeout` seconds from when it is asked)."""

    def __init__(self, op: str, args: dict[str, Any], what: str, timeout: float) -> None:
        self.op, self.what, self.timeout = op, what, timeout
        self._engine = _engine()
        self._future = self._engine.submit(op, args)

    def answer(self) -> Answer:
        """The engine's answer; KrcError when it ran past its deadline or its memory limit, EngineEnded (exit 3)
        when the engine failed on its own."""
        try:
            return self._future.result(timeout=self.timeout)
        except FutureTimeout:
            self._engine.kill()
            raise KrcError(f"{self.what} did not finish within {self.timeout:g} s and was stopped; "
                           "look for a runaway loop or expansion in it") from None
        except EngineEnded as ended:
            if ended.over_memory:
                raise KrcError(f"{self.what} was stopped: the engine went over its memory limit; "
                               + limits.ENGINE_MEMORY_MB.exceeded("the memory it needed")) from None
            raise

    def result(self, where: Location | None = None) -> Any:
        """The result; KrcError at `where` with the op's own message when it reported an error."""
        answer = self.answer()
        if answer.error is not None:
            raise KrcError(f"{self.what}: {answer.error}", where)
        return answer.result


def call(op: str, args: dict[str, Any], *, what: str, timeout: float, where: Location | None = None) -> Any:
    """One request, answered: its result, or KrcError at `where`."""
    return Pending(op, args, what, timeout).result(where)
