"""One helper process for a whole run, shared by its worker processes over a Unix socket.

Where a run compiles in several processes (pipeline.jobs), a helper per process means one copy of it per process
(Ray's generator holds about 70 MB) and, when each ends after its answer to keep that down, one start per job
(importing Ray: about 0.5 s of CPU each). Instead, the first process of the run that needs a helper starts it
listening on a socket in the run's private folder (the one the run's engine socket is in, which only krc's user
can enter); every process of the run then connects to that one. A lock file in the folder makes sure only one
process starts it. The helper answers one request at a time, whoever sends it (each from a fresh state, as
helper_process says), and lives as long as the pipe of the process that started it: it ends with that process
however that ends. A process that finds it gone (its starter ended) starts another.

The helper is started with `--socket PATH` added to its command; it binds the socket, says `ready` on stdout,
then answers JSON lines on every connection.
"""
from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import select
import socket
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .. import jsontext
from .helper_process import HelperFailed, HelperTimeout

_STDERR_TAIL = 4000


class _Started:
    """A helper this process started: its pipe (its life) and what it printed."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None, path: str, timeout: float) -> None:
        self._stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen([*argv, "--socket", path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self._stderr, env=None if env is None else dict(env))
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)  # not for ever: a lock is held
        if not ready:
            self.process.kill()
            self.end()
            raise HelperTimeout
        if self.process.stdout.readline().strip() != b"ready":
            self.end()
            raise HelperFailed(self.stderr_tail())

    def stderr_tail(self) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        self._stderr.seek(0, os.SEEK_END)
        self._stderr.seek(max(0, self._stderr.tell() - _STDERR_TAIL))
        return self._stderr.read().decode(errors="replace").strip()

    def end(self) -> None:
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class _Connection:
    def __init__(self, path: str) -> None:
        self.path = path
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.socket.connect(path)
        except OSError:
            self.socket.close()
            raise
        self.reader = self.socket.makefile("rb")

    def ask(self, request: Mapping[str, Any], timeout: float) -> dict[str, Any]:
        self.socket.settimeout(timeout)
        try:
            self.socket.sendall(jsontext.line(request) + b"\n")
            line = self.reader.readline()
        except TimeoutError:
            raise HelperTimeout from None
        answer = None
        with contextlib.suppress(ValueError):
            answer = jsontext.loads(line)
        if not isinstance(answer, dict):
            raise ConnectionError("the shared helper ended before it answered")
        return answer

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.reader.close()
            self.socket.close()


_LOCK = threading.Lock()  # the tables below; each helper's own lock is held while it is started or asked
_PID = os.getpid()
_CONNECTIONS: dict[str, _Connection] = {}
_STARTED: dict[str, _Started] = {}
_HELPER_LOCKS: dict[str, threading.Lock] = {}


def _forget_after_fork() -> None:
    global _PID
    if os.getpid() != _PID:  # a forked child must not use its parent's connections or helpers
        _CONNECTIONS.clear()
        _STARTED.clear()
        _HELPER_LOCKS.clear()
        _PID = os.getpid()


def _helper_lock(name: str) -> threading.Lock:
    """The lock a request to (or the start of) helper `name` holds in this process: one helper's start (Ray's
    generator imports Ray for about a second) never holds up a request to another (a KubeRay build)."""
    with _LOCK:
        _forget_after_fork()
        return _HELPER_LOCKS.setdefault(name, threading.Lock())


def _socket_path(folder: str, name: str) -> str:
    return os.path.join(folder, f"{name}.sock")


def _connect_or_start(folder: str, name: str, argv: Sequence[str], env: Mapping[str, str] | None,
                      timeout: float) -> _Connection:
    path = _socket_path(folder, name)
    with contextlib.suppress(OSError):
        return _Connection(path)
    with open(os.path.join(folder, f"{name}.lock"), "a", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one starter; the others wait here, then connect to its helper
        with contextlib.suppress(OSError):
            return _Connection(path)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # a socket whose helper has ended (its starter is gone)
        with _LOCK:
            started = _STARTED.pop(name, None)
        if started is not None:
            started.end()
        fresh = _Started(argv, env, path, timeout)
        with _LOCK:
            _STARTED[name] = fresh
        return _Connection(path)


def ask(folder: str, name: str, argv: Sequence[str], env: Mapping[str, str] | None, request: Mapping[str, Any],
        timeout: float) -> dict[str, Any]:
    """The run's helper `name` (started with argv and env by the first process that asks) answers request.
    HelperFailed when it cannot start or ends without answering twice; HelperTimeout after `timeout` seconds."""
    with _helper_lock(name):
        for attempt in (1, 2):
            connection = _connection(folder, name, argv, env, timeout)
            try:
                answer = connection.ask(request, timeout)
            except HelperTimeout:
                connection.close()
                with _LOCK:
                    started = _STARTED.pop(name, None)
                if started is not None:  # stuck: the next request, from any process, starts another
                    started.process.kill()
                    started.end()
                raise
            except OSError:  # ConnectionError too: the helper ended (its starter did); a new one on the retry
                connection.close()
                if attempt == 2:
                    with _LOCK:
                        started = _STARTED.get(name)
                    raise HelperFailed(started.stderr_tail() if started else "the shared helper ended") from None
                continue
            with _LOCK:
                _CONNECTIONS[name] = connection
            return answer
    raise AssertionError("unreachable")


def _connection(folder: str, name: str, argv: Sequence[str], env: Mapping[str, str] | None,
                timeout: float) -> _Connection:
    """This process's connection to the run's helper `name` (the helper started if no process has); the caller
    holds the helper's lock, and puts the connection back when it is done with it."""
    with _LOCK:
        connection = _CONNECTIONS.pop(name, None)
    if connection is not None and connection.path != _socket_path(folder, name):
        connection.close()  # to an earlier run's helper: this run's is in its own folder
        connection = None
    return connection or _connect_or_start(folder, name, argv, env, timeout)


def start(folder: str, name: str, argv: Sequence[str], env: Mapping[str, str] | None, timeout: float) -> None:
    """The run's helper `name` up, started by this process unless another has, without asking it anything: its
    start overlaps the work before the first question (which waits for it, holding the helper's lock). A helper
    that cannot start is left to that question, which says why."""
    with _helper_lock(name):
        try:
            connection = _connection(folder, name, argv, env, timeout)
        except (OSError, HelperFailed, HelperTimeout):
            return
        with _LOCK:
            _CONNECTIONS[name] = connection


def end(which: Callable[[str], bool]) -> None:
    """End the helpers this process started whose name `which` accepts (and its connections to any)."""
    with _LOCK:
        _forget_after_fork()
        for name in [n for n in _CONNECTIONS if which(n)]:
            _CONNECTIONS.pop(name).close()
        ending = [_STARTED.pop(n) for n in list(_STARTED) if which(n)]
    for started in ending:
        started.end()


@atexit.register
def _end_all() -> None:
    if os.getpid() == _PID:
        end(lambda _name: True)
