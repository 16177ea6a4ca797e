"""Helper processes that stay up between requests: one JSON request per line in, one JSON answer per line out.

krc's slow-starting helper, Ray's autoscaler-config generator (importing `ray`: about 0.9 s), costs more to
start than to answer. A process that runs many batches (`krc lint` of hundreds of environments, the Argo CD
plugin's long-lived callers, a test session) starts each helper once and hands it request after request. Each
request is answered from a fresh state inside the helper (Ray's once-only warnings reset), so an answer never
depends on what the helper answered before.

A helper that times out, or whose caller stops waiting, is killed, never reused. An idle helper ends by itself
after $KRC_HELPER_IDLE_SECONDS (default 2 s: back-to-back engine runs share one process, while a helper never
sits on its 70-150 MB through minutes of other work; a long-lived caller such as a test session sets more), and
in any case with krc: it reads its requests from a pipe, which closes when krc exits, however it exits.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..diagnostics.problems import KrcError
from ..settings import variables

# What a helper that failed left on stderr, kept for the error message
_STDERR_TAIL = 4000
# How long an idle helper waits for its next request before it exits; the helpers read it from their environment
IDLE_VARIABLE = "KRC_HELPER_IDLE_SECONDS"
DEFAULT_IDLE_SECONDS = 2.0
# What a helper inherits of krc's environment: enough to run, nothing that changes what the helper's runtime does
# (NODE_OPTIONS, PYTHONPATH and the like), and nothing that changes from one call to the next (so one process
# serves them all)
_INHERITED = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")


def idle_seconds() -> float:
    """How long a helper may wait idle for its next request: $KRC_HELPER_IDLE_SECONDS (checked here), else 2 s."""
    raw = variables.value(IDLE_VARIABLE)
    try:
        idle = float(raw) if raw else DEFAULT_IDLE_SECONDS
    except ValueError:
        idle = -1.0
    if not 0 < idle <= 86400:
        raise KrcError(f"{IDLE_VARIABLE}={raw!r} is not a number of seconds between 0 and 86400; unset it or give one")
    return idle


def helper_environment(**given: str) -> dict[str, str]:
    """A helper's whole environment: what it inherits of krc's, `given`, and how long it may wait idle."""
    return {**variables.inherited(_INHERITED), **given, IDLE_VARIABLE: f"{idle_seconds():g}"}


class HelperFailed(Exception):
    """The helper ended (or answered something that is not one JSON object) before answering."""

    def __init__(self, stderr: str) -> None:
        super().__init__(stderr)
        self.stderr = stderr

    @property
    def last_line(self) -> str:
        """What the helper said last before it ended: usually why."""
        return (self.stderr.strip().splitlines() or ["no output"])[-1]


class HelperTimeout(Exception):
    """No answer within the time given; the helper has been killed."""


class HelperProcess:
    """One helper process: `send` a request, then `receive` its answer."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None) -> None:
        self.key = _key(argv, env)
        self._stderr = tempfile.TemporaryFile()
        self._process = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self._stderr, env=None if env is None else dict(env))
        self._buffer = b""
        self.answered = 0

    def alive(self) -> bool:
        return self._process.poll() is None

    def send(self, request: Mapping[str, Any]) -> None:
        line = json.dumps(request, separators=(",", ":")).encode() + b"\n"
        try:
            assert self._process.stdin is not None
            self._process.stdin.write(line)
            self._process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise HelperFailed(self.stderr_tail()) from None

    def receive(self, timeout: float) -> dict[str, Any]:
        """The next answer; HelperTimeout (helper killed) or HelperFailed (helper ended or spoke nonsense)."""
        assert self._process.stdout is not None
        stdout = self._process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise HelperTimeout
            ready, _, _ = select.select([stdout], [], [], left)
            if not ready:
                continue
            chunk = os.read(stdout, 1 << 20)
            if not chunk:  # the helper ended
                self.kill()
                raise HelperFailed(self.stderr_tail())
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            answer = json.loads(line)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            self.kill()
            raise HelperFailed(self.stderr_tail() or line[:500].decode(errors="replace"))
        self.answered += 1
        return answer

    def kill(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        for stream in (self._process.stdin, self._process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):  # a request the dead helper never read: nothing to flush to
                    stream.close()

    def stderr_tail(self) -> str:
        try:
            self._process.wait(timeout=5)  # let it finish writing why it ended
        except subprocess.TimeoutExpired:
            pass
        self._stderr.seek(0, os.SEEK_END)
        self._stderr.seek(max(0, self._stderr.tell() - _STDERR_TAIL))
        return self._stderr.read().decode(errors="replace").strip()


def _key(argv: Sequence[str], env: Mapping[str, str] | None) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    return tuple(argv), tuple(sorted(env.items())) if env is not None else ()


class HelperPool:
    """Idle helpers by command and environment: `take` one (or start one), `give_back` it after its answer."""

    def __init__(self) -> None:
        self._idle: list[HelperProcess] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._keep_idle = True

    def keep_idle(self, keep: bool) -> None:
        """Whether a helper waits for the next request after its answer (the default), or ends at once: where
        several krc processes work side by side, idle helpers in each would add up (see pipeline.jobs). Helpers
        idle already are left to answer a next request or end at their idle time, rather than killed: a
        long-lived caller (a test session, a plugin host) keeps the ones it started up."""
        self._keep_idle = keep

    def take(self, argv: Sequence[str], env: Mapping[str, str] | None) -> HelperProcess:
        key = _key(argv, env)
        with self._lock:
            self._forget_after_fork()
            for helper in [h for h in self._idle if h.key == key]:
                self._idle.remove(helper)
                if helper.alive():
                    return helper
                helper.kill()  # ended while idle (its idle time ran out): never reused
        return HelperProcess(argv, env)

    def give_back(self, helper: HelperProcess) -> None:
        with self._lock:
            self._forget_after_fork()
            if helper.alive() and self._keep_idle:
                self._idle.append(helper)
                return
        helper.kill()

    def end_idle(self, which: Callable[[tuple[str, ...]], bool]) -> None:
        """End the idle helpers whose command `which` accepts: a caller done with one kind of helper frees its
        memory for the next work instead of leaving it to the idle time."""
        with self._lock:
            self._forget_after_fork()
            ending = [h for h in self._idle if which(h.key[0])]
            self._idle = [h for h in self._idle if h not in ending]
        for helper in ending:
            helper.kill()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        if os.getpid() == self._pid:
            for helper in idle:
                helper.kill()

    def _forget_after_fork(self) -> None:
        # a forked child must not talk to its parent's helpers
        if os.getpid() != self._pid:
            self._idle, self._pid = [], os.getpid()


POOL = HelperPool()
atexit.register(POOL.close)


class Request:
    """One request under way: sent when made, its answer awaited by `answer`. An idle helper can have died since
    its last answer (killed from outside, out of memory): a reused helper that fails is replaced once, and the
    request sent again to a new one, whose failure is the request's own."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None, request: Mapping[str, Any]) -> None:
        self._argv, self._env, self._request = argv, env, request
        self._helper: HelperProcess | None = POOL.take(argv, env)
        try:
            self._helper.send(request)
        except HelperFailed:
            self._replace()

    def answer(self, timeout: float) -> dict[str, Any]:
        """The answer; HelperTimeout or HelperFailed (the helper killed) when there is none."""
        assert self._helper is not None, "answered already"
        try:
            answer = self._helper.receive(timeout)
        except HelperFailed:
            if self._helper.answered == 0:
                raise
            self._replace()
            answer = self._helper.receive(timeout)
        POOL.give_back(self._helper)
        self._helper = None
        return answer

    def _replace(self) -> None:
        assert self._helper is not None
        self._helper.kill()
        if self._helper.answered == 0:
            raise HelperFailed(self._helper.stderr_tail())
        self._helper = HelperProcess(self._argv, self._env)
        self._helper.send(self._request)


def ask(argv: Sequence[str], env: Mapping[str, str] | None, request: Mapping[str, Any],
        timeout: float) -> dict[str, Any]:
    """One request answered by an idle helper of this command (or a new one), which then waits for the next."""
    return Request(argv, env, request).answer(timeout)
