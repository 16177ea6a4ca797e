"""The engine of a krc run: one process, started by the krc process that first needs it, shared with its workers.

Libraries inside the engine print to stdout and stderr, so the protocol has pipes of its own (--requests-fd,
--answers-fd); what the engine prints goes to a temporary file kept for the error message. The engine also
listens on a Unix socket in a folder only this user can enter (--socket): while a run compiles in worker
processes (pipeline.jobs), they connect to it (`shared_with_workers`) instead of starting engines of their own,
so the run holds one copy of every compiled CRD and chart however many processes compile.

Bounds: every answer has a deadline (past it, the engine is killed, or a worker's connection closed, and the
request is an input error naming what was asked); the engine's memory is bounded by the Go runtime's soft limit
(GOMEMLIMIT) and a hard one the engine enforces itself (it exits, naming the limit, rather than taking the
machine down). A forked child never talks to its parent's engine.
"""
from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import shutil
import socket
import stat
import tempfile
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

from ..diagnostics.problems import KrcError, Location
from ..settings import lifetime, limits, variables
from .binary import engine_binary
from .channel import Answer, Channel, EngineEnded
from .child import ChildProcess

__all__ = ["Answer", "EngineEnded", "Pending", "call", "close_engine", "engine_done", "engine_name", "remember",
           "shared_with_workers"]

# what the engine inherits of krc's environment: enough to run, nothing that changes what the libraries do (a
# developer's profiles aside: engine/README.md)
_INHERITED = ("PATH", "LANG", "LC_ALL", "TMPDIR", "KRC_ENGINE_CPUPROFILE", "KRC_ENGINE_HEAPPROFILE")
# the engine's exit status when it stopped itself at its hard memory limit (engine/limits.go)
MEMORY_EXIT = 86
# The collector's target: well under the hard limit, so a run's engine stays near its live memory (about 150 MB
# for a project's CRDs and charts) instead of twice that; Go exceeds it when live memory needs more.
SOFT_MEMORY_MB = 192
# The collector's proportional target (GOGC) of an engine started inside `roomy_engine`, and otherwise Go's own.
ROOMY_COLLECTOR_PERCENT = 200
# The soft limit an engine started inside `collecting_at_limit` collects near (or twice its live heap, if more).
AT_LIMIT_MEMORY_MB = 72


@dataclasses.dataclass(frozen=True)
class Collector:
    """How an engine krc starts collects garbage: GOGC, and its soft limit (GOMEMLIMIT, never above the hard
    one); `at_limit`: with GOGC=off, the engine keeps that limit at least twice its live heap (engine/limits.go)."""
    percent: str = "100"
    soft_mb: int = SOFT_MEMORY_MB
    at_limit: bool = False


_collector = Collector()
# Set while a run's workers may connect to its engine: the socket, and the process that owns the engine
SOCKET_VARIABLE = "KRC_ENGINE_SOCKET"
OWNER_VARIABLE = "KRC_ENGINE_OWNER"


def _socket_folder() -> str:
    """A new folder only this user can enter, its path short enough for a Unix socket (108 bytes)."""
    parent = tempfile.gettempdir()
    return tempfile.mkdtemp(prefix="krc-engine-", dir=parent if len(parent) < 60 else "/tmp")


class EngineProcess(ChildProcess):
    """The engine this krc process started: its pipes, its log, its socket for workers."""

    def __init__(self, binary: Path, collect_late: bool = False) -> None:
        """`collect_late`: the engine's collector waits for the soft memory limit until a worker connects (a
        command compiling a few environments waits for the engine's CRD compiles, a third of which is collecting)."""
        self.socket_folder = _socket_folder()
        self.socket_path = os.path.join(self.socket_folder, "engine.sock")
        hard = limits.ENGINE_MEMORY_MB.value
        env = variables.inherited(_INHERITED)
        # collecting late: near the usual soft limit until a worker connects, then at a proportional target
        collector = Collector() if collect_late and _collector.at_limit else _collector
        env.update(GOMEMLIMIT=f"{min(collector.soft_mb, hard)}MiB", KRC_ENGINE_MAX_MEMORY_MB=str(hard),
                   GOGC=collector.percent, HOME="/nonexistent")

        def unable(err: OSError) -> KrcError:
            shutil.rmtree(self.socket_folder, ignore_errors=True)
            return KrcError(f"the krc engine {binary} could not start ({err.strerror or err}); check the file, "
                            "or rebuild it with 'make engine'")

        arguments = ["--socket", self.socket_path, *(["--collect-late"] if collect_late else []),
                     *(["--collect-at-limit"] if collector.at_limit else [])]
        super().__init__(str(binary), arguments, env, unable)
        self.collecting_late = collect_late

    def why_ended(self) -> EngineEnded:
        code = self.exit_code()
        return EngineEnded(f"the krc engine ended (exit {code}): {self.log_tail()}", over_memory=code == MEMORY_EXIT)

    def kill(self) -> None:
        super().kill()
        shutil.rmtree(self.socket_folder, ignore_errors=True)

    def close(self) -> None:
        super().close()
        shutil.rmtree(self.socket_folder, ignore_errors=True)


class EngineConnection(Channel):
    """A worker's connection to the engine of its run."""

    def __init__(self, path: str) -> None:
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._socket.connect(path)
        except OSError as err:
            self._socket.close()
            raise EngineEnded(f"the run's krc engine at {path} does not answer ({err.strerror or err})") from None
        self.pid = os.getpid()
        super().__init__(self._socket.makefile("wb"), self._socket.makefile("rb"))

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)  # wakes the reader thread
        super().kill()
        self._socket.close()

    def close(self) -> None:
        self.kill()


_ENGINE: EngineProcess | EngineConnection | None = None
_ENGINE_LOCK = threading.Lock()


def _engine(collect_late: bool = False) -> EngineProcess | EngineConnection:
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None or _ENGINE.pid != os.getpid() or not _ENGINE.alive():
            if _ENGINE is not None and _ENGINE.pid == os.getpid():
                _ENGINE.kill()
            shared = variables.value(SOCKET_VARIABLE)
            if shared and variables.value(OWNER_VARIABLE) != str(os.getpid()):
                _ENGINE = EngineConnection(shared)
            else:
                _ENGINE = EngineProcess(engine_binary(), collect_late)
        return _ENGINE


# What this process has sent its engine once and names by digest since (a chart archive, a CRD), by (process, kind,
# krc's digest): how the engine names it. The engine answers needArchive / needCRD when it does not know a name (a
# new engine process, or one that forgot it), and the caller sends the whole thing again.
_KNOWN: dict[tuple[int, str, str], str] = {}


def engine_name(kind: str, digest: str) -> str | None:
    """How this process's engine names what krc knows by `digest`, if it was sent before."""
    with _ENGINE_LOCK:
        return _KNOWN.get((os.getpid(), kind, digest))


def remember(kind: str, digest: str, name: str) -> None:
    """The engine now knows what krc knows by `digest`, under `name`."""
    with _ENGINE_LOCK:
        _KNOWN[os.getpid(), kind, digest] = name


@contextlib.contextmanager
def roomy_engine() -> Iterator[None]:
    """Inside, an engine this process starts lets its heap grow to three times its live memory before it collects
    rather than twice (GOGC=ROOMY_COLLECTOR_PERCENT), up to its soft limit (SOFT_MEMORY_MB), where it collects as
    before: for a command whose other processes leave it that room (no Ray generator beside it, unlike `krc lint`
    and `krc diff`). The engine's collector was an eighth of its CPU in a cold render and more under CUE; at 200,
    500 environments' `krc policy` used 18 % less engine CPU and `krc render` 11 % less, for 40-60 MB more at peak
    (under 400 MB). An engine already running keeps its target."""
    with _collecting(Collector(str(ROOMY_COLLECTOR_PERCENT))):
        yield


def has_room() -> bool:
    """Whether this process runs inside roomy_engine: its command's processes have room to grow (the worker
    processes it starts collect less often too: settings.collector)."""
    return _collector.percent == str(ROOMY_COLLECTOR_PERCENT)


@contextlib.contextmanager
def collecting_at_limit() -> Iterator[None]:
    """Inside, an engine this process starts collects only when it nears a soft limit of AT_LIMIT_MEMORY_MB, or
    twice its live heap when that is more (GOGC=off, `--collect-at-limit`): for `krc lint`, whose peak memory is
    every process at its highest at once (Ray's generator and KubeRay's builds beside the engine) and leaves no
    room for a roomier target. At 500 environments its engine used 6 % less CPU than at Go's default target for
    about the same peak. A collector waiting for a few environments' CRD compiles (start_engine(few=True)) keeps
    the usual soft limit; an engine already running keeps its settings."""
    with _collecting(Collector("off", AT_LIMIT_MEMORY_MB, at_limit=True)):
        yield


@contextlib.contextmanager
def _collecting(collector: Collector) -> Iterator[None]:
    global _collector
    outside, _collector = _collector, collector
    try:
        yield
    finally:
        _collector = outside


def start_engine(few: bool = False) -> None:
    """Start this process's engine now, before anything is asked of it (its runtime takes about 50 ms to come up);
    one that cannot start is left to the first request, which reports why. `few`: the command expects to compile
    a few environments, so the engine's collector waits for its soft memory limit (EngineProcess)."""
    with contextlib.suppress(KrcError, EngineEnded):
        _engine(collect_late=few)


def collect_as_usual() -> Future[Answer] | None:
    """The command compiles many environments after all (a template or chart changed under a few edited files):
    an engine this process started collecting late (start_engine(few=True)) collects as usual from now on and
    gives back what its heap grew to, rather than holding up to its soft limit for the whole run. The answer
    (nothing) needs no waiting for; None when there is nothing to tell (no such engine, or told already)."""
    with _ENGINE_LOCK:
        engine = _ENGINE
    if not isinstance(engine, EngineProcess) or engine.pid != os.getpid() or not engine.collecting_late:
        return None
    engine.collecting_late = False
    return engine.submit("collect", {})


# Engines this process let go before its end (engine_done), reaped at the end (close_engine).
_RELEASED: list[EngineProcess] = []


def engine_done() -> None:
    """The command asks its engine nothing more: every environment is compiled, what is left is writing and
    reporting. In a process that ends with its command (settings.lifetime), the engine is told to end now (its
    requests' pipe closed: it answers what is under way, then exits), so its exit, tens of milliseconds while the
    system frees its heap, overlaps krc's writing instead of following it; it is reaped at the end (close_engine),
    and a later request would start another. Anywhere else (the tests, an in-process caller running command after
    command) the engine stays for the next command."""
    global _ENGINE
    if not lifetime.one_command():
        return
    with _ENGINE_LOCK:
        engine = _ENGINE
        if not isinstance(engine, EngineProcess) or engine.pid != os.getpid():
            return
        _ENGINE = None
        _RELEASED.append(engine)
    if not engine.finish_writing(timeout=10):
        engine.kill()


@atexit.register
def close_engine() -> None:
    global _ENGINE
    with _ENGINE_LOCK:
        ending = [e for e in (*_RELEASED, _ENGINE) if e is not None and e.pid == os.getpid()]
        _ENGINE = None
        _RELEASED.clear()
    for engine in ending:
        engine.close()


def run_folder() -> str | None:
    """The private folder of the run this process works in with others (its engine's socket is there), while
    there is one: helpers shared by the run's processes listen there too (shared_helper). Only a folder of this
    user's that no one else may enter (as _socket_folder makes it) is one."""
    shared = variables.value(SOCKET_VARIABLE)
    if not shared:
        return None
    folder = os.path.dirname(shared)
    try:
        facts = os.lstat(folder)
    except OSError:
        return None
    private = stat.S_ISDIR(facts.st_mode) and facts.st_uid == os.getuid() and not facts.st_mode & 0o077
    return folder if private else None


def shares_schemas() -> bool:
    """Whether the engine should share the compiled CRD schemas' identical subtrees (engine/validate_share.go):
    in a run of many environments (one with workers), where it keeps the engine's memory down; a run of a few
    would only wait for the sharing (about 0.1 s)."""
    return run_folder() is not None


@contextlib.contextmanager
def shared_with_workers() -> Iterator[None]:
    """While inside, worker processes this process starts connect to its engine (started here if need be)
    instead of starting their own. Without an engine to share (none built), they find that out themselves."""
    try:
        engine = _engine()
    except (KrcError, EngineEnded):
        yield
        return
    if not isinstance(engine, EngineProcess):
        yield
        return
    with variables.exported({SOCKET_VARIABLE: engine.socket_path, OWNER_VARIABLE: str(os.getpid())}):
        yield


class Pending:
    """One request under way; `answer` waits for it (at most `timeout` seconds from when it is asked)."""

    def __init__(self, op: str, args: dict[str, Any], what: str, timeout: float) -> None:
        self.op, self.what, self.timeout = op, what, timeout
        self._engine = _engine()
        self._future: Future[Answer] = self._engine.submit(op, args)

    def done(self) -> bool:
        """Whether the answer is in (or the request failed): answer() would not wait."""
        return self._future.done()

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
