"""krc's own pool of worker processes (pipeline.worker_pool): calls, answers, failures, a worker's end, shutdown."""
from __future__ import annotations

import os
import pickle
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, wait
from pathlib import Path

import pytest

from compiler.diagnostics.problems import KrcError
from compiler.pipeline import worker_pool, worker_process
from compiler.pipeline.worker_pool import WorkerEnded, WorkerPool, WorkerTraceback
from compiler.project.paths import Project

SETUP_MARK = "KRC_TEST_WORKER_SETUP"
KRC = Path(sys.executable).with_name("krc")


def _setup() -> None:
    os.environ[SETUP_MARK] = "ran"


def _nothing() -> None:
    pass


def _where() -> tuple[int, str | None, bool]:
    return os.getpid(), os.environ.get(SETUP_MARK), "multiprocessing" in sys.modules


def _echo(value: object) -> object:
    return value


def _fail_as_input() -> None:
    raise KrcError("environments/dev.yaml:3: not a quantity; write 2Gi")


class _Unpicklable(Exception):
    def __init__(self, a: int, b: int) -> None:  # pickled exceptions are rebuilt from args: this one cannot be
        super().__init__(f"{a}/{b}")


def _fail_unpicklably() -> None:
    raise _Unpicklable(1, 2)


def _sleep_then(seconds: float, value: object) -> object:
    time.sleep(seconds)
    return value


def _started_at(seconds: float) -> float:
    started = time.monotonic()  # CLOCK_MONOTONIC: one clock for every process of the machine
    time.sleep(seconds)
    return started


def _exit_hard() -> None:
    os._exit(7)


def _big(size: int) -> bytes:
    return b"y" * size


def test_calls_run_in_fresh_processes_after_the_setup_and_answer_in_order():
    with WorkerPool(2, _setup) as pool:
        futures = [pool.submit(_echo, {"i": i, "text": "é" * i}) for i in range(20)]
        assert [f.result(timeout=60) for f in futures] == [{"i": i, "text": "é" * i} for i in range(20)]
        where = {pool.submit(_where).result(timeout=60) for _ in range(6)}
    assert all(pid != os.getpid() and setup == "ran" for pid, setup, _ in where)
    assert not any(loaded for _, _, loaded in where)  # no multiprocessing (and so no resource tracker) in a worker
    assert SETUP_MARK not in os.environ


def test_a_call_and_an_answer_larger_than_a_pipe_holds_never_block_the_caller():
    payload = b"x" * (8 << 20)
    with WorkerPool(1, _nothing) as pool:
        slow = pool.submit(_sleep_then, 3, "slept")
        futures = [pool.submit(_echo, payload) for _ in range(3)]  # queued behind the sleeping call
        assert not slow.done()  # handed to the writer thread: the worker reads them only once it has slept
        assert slow.result(timeout=60) == "slept"
        assert all(f.result(timeout=60) == payload for f in futures)
        assert len(pool.submit(_big, 16 << 20).result(timeout=60)) == 16 << 20


def test_an_exception_comes_back_as_itself_with_the_workers_traceback_as_its_cause():
    with WorkerPool(1, _nothing) as pool:
        with pytest.raises(KrcError, match="dev.yaml:3") as caught:
            pool.submit(_fail_as_input).result(timeout=60)
        assert isinstance(caught.value.__cause__, WorkerTraceback)
        assert "_fail_as_input" in str(caught.value.__cause__)
        with pytest.raises(RuntimeError, match="_Unpicklable: 1/2"):
            pool.submit(_fail_unpicklably).result(timeout=60)
        with pytest.raises(Exception, match="pickle"):  # a call that does not pickle fails alone
            pool.submit(_echo, lambda: None).result(timeout=60)
        assert pool.submit(_echo, "still here").result(timeout=60) == "still here"


def test_a_worker_that_ends_fails_its_calls_and_the_pools_later_ones():
    with WorkerPool(1, _nothing) as pool:
        ended = pool.submit(_exit_hard)
        waiting = [pool.submit(_echo, i) for i in range(4)]
        with pytest.raises(WorkerEnded, match="ended with status 7 before it answered"):
            ended.result(timeout=60)
        for future in waiting:
            with pytest.raises(WorkerEnded):
                future.result(timeout=60)
        with pytest.raises(WorkerEnded, match="--workers 1"):
            pool.submit(_echo, 1)


def test_shutdown_cancels_what_waits_and_lets_what_runs_finish():
    pool = WorkerPool(1, _nothing)
    running = pool.submit(_sleep_then, 0.3, "done")
    queued = [pool.submit(_echo, i) for i in range(6)]  # one more sent to the worker, the rest wait in the pool
    pool.shutdown(wait=True, cancel_futures=True)
    assert running.result() == "done"
    assert sum(f.cancelled() for f in queued) == 5 and all(f.done() for f in queued)
    assert all(w.process.returncode == 0 for w in pool._workers)  # its pipe closed, the worker ended
    with pytest.raises(RuntimeError, match="shut down"):
        pool.submit(_echo, 1)


def test_the_busiest_worker_gets_no_more_calls_while_another_is_free():
    with WorkerPool(2, _nothing) as pool:
        slow = pool.submit(_sleep_then, 3, os.getpid)
        quick = [pool.submit(_sleep_then, 0.01, i) for i in range(6)]
        wait(quick, return_when=FIRST_COMPLETED)
        assert not slow.done()  # answered by the other worker while the first sleeps
        assert [f.result(timeout=60) for f in quick] == list(range(6))


def test_calls_start_in_the_order_submitted_whatever_room_a_worker_has_meanwhile():
    with WorkerPool(1, _nothing) as pool:
        futures = [pool.submit(_started_at, 0.02) for _ in range(8)]
        started = [f.result(timeout=60) for f in futures]
    assert started == sorted(started)


def test_near_the_end_a_call_waits_in_the_pool_where_the_caller_can_take_it_back():
    """A busy worker is sent a second call only while more calls wait than there are workers: the last ones stay in
    the pool, and a caller that comes free (jobs._shared) cancels one and runs it itself instead of waiting."""
    with WorkerPool(1, _nothing) as pool:
        many = [pool.submit(_sleep_then, 0.2, i) for i in range(4)]
        assert many[0].result(timeout=60) == 0
        assert many[2].running()  # sent ahead of the worker's answer to many[1]: two still waited then
        assert many[3].cancel()  # the last one waited in the pool
        assert [f.result(timeout=60) for f in many[1:3]] == [1, 2]
        busy = pool.submit(_sleep_then, 0.5, "slept")
        last = pool.submit(_echo, "last")
        assert last.cancel() and not busy.done()


def test_a_worker_leaves_its_heap_to_the_system_when_its_pipe_closes():
    """A worker whose calls are done ends without collecting what it built (gc.freeze), as the command does; its
    exit handlers still run."""
    requests_in, requests_out = os.pipe()
    answers_in, answers_out = os.pipe()
    wrapped = ("import atexit, gc, sys\n"
               "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n" + worker_process.BOOT)
    with open(requests_out, "wb") as requests:
        worker_process.write_frame(requests, 0, pickle.dumps(sys.path))
        worker_process.write_frame(requests, 0, pickle.dumps(_nothing))
    done = subprocess.run([sys.executable, "-c", wrapped, worker_pool._ROOT, str(requests_in), str(answers_out)],
                          pass_fds=(requests_in, answers_out), capture_output=True, text=True, timeout=120, check=True)
    for end in (requests_in, answers_in, answers_out):
        os.close(end)
    assert done.stdout.strip() == "frozen at exit: True"


def test_stopping_the_command_stops_its_workers():
    pool = WorkerPool(1, _nothing)
    pool.submit(_sleep_then, 60, None)
    worker_pool.terminate_all()
    assert pool._workers[0].process.wait(timeout=30) == -signal.SIGTERM
    pool.shutdown(wait=False, cancel_futures=True)


def test_a_worker_started_from_elsewhere_imports_this_checkouts_compiler(tmp_path: Path):
    """The worker's first path entry is the folder holding the command's `compiler` package, whatever the working
    folder: its calls run the same code as the command."""
    here = Path.cwd()
    os.chdir(tmp_path)
    try:
        with WorkerPool(1, _nothing) as pool:
            assert pool.submit(_module_file).result(timeout=60) == _module_file()
    finally:
        os.chdir(here)


def _module_file() -> str:
    return str(Path(worker_pool.__file__).resolve())


SLOW_JINJA = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: slow\ndata:\n"
              "  x: '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}'\n")


def _children(pid: int) -> set[int]:
    """The processes `pid`'s threads started; a thread that ended while they were listed (krc's threads come and
    go: a Jsonnet evaluation runs in one of its own) has none, and so has a process that ended meanwhile."""
    found: set[int] = set()
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except (FileNotFoundError, ProcessLookupError):
        return found
    for task in tasks:
        try:
            found.update(int(child) for child in (task / "children").read_text().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_the_command_and_its_workers_at_once(project_without_policies: Project, tmp_path: Path,
                                                             signum: int):
    """Fourteen environments whose template would run for hours: the command compiles them in a worker too, and
    a signal stops both, the worker in the middle of its call, with no traceback from either."""
    project = project_without_policies
    text = project.environment_file("dev").read_text(encoding="utf-8")
    for i in range(13):
        copy = re.sub(r"(\n  destination: )\{[^}]*\}", rf"\1{{name: dev-{i}}}", text)
        project.environment_file(f"dev-{i}").write_text(copy, encoding="utf-8")
    (project.templates_dir / "objects" / "slow.yaml.j2").write_text(SLOW_JINJA)
    run = subprocess.Popen([str(KRC), "--project", str(project.root), "render", "--jobs", "2"], text=True,
                           env={**os.environ, "KRC_CACHE_DIR": str(tmp_path / "cache")}, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    workers: set[int] = set()
    deadline = time.monotonic() + 60
    while not workers and time.monotonic() < deadline and run.poll() is None:
        time.sleep(0.2)
        workers = {pid for pid in _children(run.pid)
                   if worker_process.BOOT.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()}
    assert workers, run.communicate()
    time.sleep(2)  # well into the template, in both processes
    run.send_signal(signum)
    _, stderr = run.communicate(timeout=30)
    assert run.returncode == 128 + signum, stderr
    assert "Traceback" not in stderr and "nothing was half-written" in stderr, stderr
    for pid in workers:  # ended (and reaped by krc: no zombie left either)
        assert not Path(f"/proc/{pid}").exists() or "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()


def test_leaving_on_an_exception_stops_the_workers_rather_than_wait_for_their_calls():
    with pytest.raises(KrcError, match="a job failed"), WorkerPool(1, _nothing) as pool:
        running = pool.submit(_sleep_then, 600, None)
        raise KrcError("a job failed")
    with pytest.raises(WorkerEnded):
        running.result(timeout=30)
    assert pool._workers[0].process.returncode == -signal.SIGTERM


def test_a_worker_that_cannot_start_leaves_none_of_the_others_behind(monkeypatch: pytest.MonkeyPatch):
    started: list[subprocess.Popen[bytes]] = []
    real_popen = subprocess.Popen

    def popen(*args: object, **kwargs: object) -> subprocess.Popen[bytes]:
        if started:
            raise OSError(24, "Too many open files")
        started.append(real_popen(*args, **kwargs))  # type: ignore[call-overload]
        return started[-1]

    monkeypatch.setattr(worker_pool.subprocess, "Popen", popen)
    with pytest.raises(OSError, match="Too many open files"):
        WorkerPool(2, _nothing)
    assert started[0].wait(timeout=30) == 0  # its pipe closed: the first worker ended
