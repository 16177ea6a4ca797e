"""One helper for a run's processes (shared_helper): the first process that asks starts it, the others connect to
it; a helper that ended, hung or never started is replaced or reported, never waited on for ever."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from compiler.native import client, shared_helper
from compiler.native.helper_process import HelperFailed, HelperTimeout

ROOT = Path(__file__).resolve().parents[2]

# Answers request lines on every connection to the socket with its pid; "sleep" waits
SERVER = """
import json, os, socket, sys, threading, time
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(sys.argv[2])
server.listen(8)
def serve(conn):
    for line in conn.makefile("rb"):
        request = json.loads(line)
        if request.get("do") == "sleep":
            time.sleep(30)
        conn.sendall((json.dumps({"pid": os.getpid(), "request": request}) + "\\n").encode())
def accept():
    while True:
        threading.Thread(target=serve, args=(server.accept()[0],), daemon=True).start()
threading.Thread(target=accept, daemon=True).start()
print("ready", flush=True)
sys.stdin.buffer.read()
"""


@pytest.fixture
def server(tmp_path: Path) -> list[str]:
    script = tmp_path / "server.py"
    script.write_text(SERVER, encoding="utf-8")
    return [sys.executable, "-I", str(script)]


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[str]:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    yield str(run)
    shared_helper.end(lambda _name: True)


def _ask_from_another_process(folder: str, server: list[str], n: int) -> tuple[int, int]:
    """(the answering helper's pid, how many helpers that process started) for a request from a new process."""
    code = ("import json, sys; from compiler.native import shared_helper; "
            f"a = shared_helper.ask({folder!r}, 'echo', {server!r}, None, {{'n': {n}}}, 10); "
            "print(json.dumps([a['pid'], len(shared_helper._STARTED)]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=60, check=True).stdout
    pid, started = json.loads(out)
    return int(pid), int(started)


def test_the_processes_of_a_run_share_the_helper_the_first_started(folder: str, server: list[str]) -> None:
    first = shared_helper.ask(folder, "echo", server, None, {"n": 1}, 10)
    assert first["request"] == {"n": 1} and first["pid"] != os.getpid()
    assert _ask_from_another_process(folder, server, 2) == (first["pid"], 0)  # connected, started none
    assert shared_helper.ask(folder, "echo", server, None, {"n": 3}, 10)["pid"] == first["pid"]


def test_a_helper_whose_starter_ended_is_replaced(folder: str, server: list[str]) -> None:
    # the other process starts the helper, which ends with it
    other_pid, started = _ask_from_another_process(folder, server, 1)
    assert started == 1
    answer = shared_helper.ask(folder, "echo", server, None, {"n": 2}, 10)
    assert answer["pid"] != other_pid and len(shared_helper._STARTED) == 1


def test_a_helper_that_ends_between_requests_is_started_again(folder: str, server: list[str]) -> None:
    first = shared_helper.ask(folder, "echo", server, None, {}, 10)["pid"]
    ended = shared_helper._STARTED["echo"].process
    ended.kill()
    ended.wait()
    assert shared_helper.ask(folder, "echo", server, None, {}, 10)["pid"] != first


def test_a_helper_that_hangs_is_stopped_and_the_next_request_gets_another(folder: str, server: list[str]) -> None:
    first = shared_helper.ask(folder, "echo", server, None, {}, 10)["pid"]
    with pytest.raises(HelperTimeout):
        shared_helper.ask(folder, "echo", server, None, {"do": "sleep"}, 0.5)
    assert shared_helper.ask(folder, "echo", server, None, {}, 10)["pid"] != first


def test_a_helper_that_cannot_start_says_why(folder: str, tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import sys\nsys.stderr.write('cannot work here\\n')\nsys.exit(3)\n", encoding="utf-8")
    with pytest.raises(HelperFailed) as failed:
        shared_helper.ask(folder, "broken", [sys.executable, "-I", str(broken)], None, {}, 10)
    assert failed.value.last_line == "cannot work here"


def test_a_helper_that_never_gets_ready_is_stopped(folder: str, tmp_path: Path) -> None:
    silent = tmp_path / "silent.py"
    silent.write_text("import time\ntime.sleep(60)\n", encoding="utf-8")
    with pytest.raises(HelperTimeout):
        shared_helper.ask(folder, "silent", [sys.executable, "-I", str(silent)], None, {}, 0.5)
    assert "silent" not in shared_helper._STARTED


def test_only_a_private_folder_of_this_user_is_a_run_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    private, shared = tmp_path / "private", tmp_path / "shared"
    private.mkdir(mode=0o700)
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    monkeypatch.setenv("KRC_ENGINE_SOCKET", str(private / "engine.sock"))
    assert client.run_folder() == str(private)
    monkeypatch.setenv("KRC_ENGINE_SOCKET", str(shared / "engine.sock"))
    assert client.run_folder() is None
    monkeypatch.setenv("KRC_ENGINE_SOCKET", str(tmp_path / "absent" / "engine.sock"))
    assert client.run_folder() is None


def test_a_later_run_in_the_same_process_gets_a_helper_of_its_own(folder: str, server: list[str], tmp_path: Path):
    """A process that outlives a run (a test session, krc used as a library) must not send the next run's
    requests to the earlier run's helper: each run's helper listens in its own folder."""
    first = shared_helper.ask(folder, "echo", server, None, {"n": 1}, 10)
    later = tmp_path / "later-run"
    later.mkdir(mode=0o700)
    second = shared_helper.ask(str(later), "echo", server, None, {"n": 2}, 10)
    assert (later / "echo.sock").is_socket()
    assert second["pid"] != first["pid"] and second["request"] == {"n": 2}


def test_a_helper_started_ahead_answers_the_first_question(folder: str, server: list[str]) -> None:
    shared_helper.start(folder, "echo", server, None, 10)
    [started] = shared_helper._STARTED.values()
    assert shared_helper.ask(folder, "echo", server, None, {"n": 1}, 10)["pid"] == started.process.pid


def test_one_helpers_start_holds_up_no_question_to_another(folder: str, server: list[str], tmp_path: Path) -> None:
    """Ray's generator imports Ray for about a second as it starts: meanwhile a KubeRay build is asked as always."""
    import threading

    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(3)\n" + SERVER, encoding="utf-8")
    starting = threading.Thread(target=shared_helper.start, args=(folder, "slow", [sys.executable, "-I", str(slow)],
                                                                  None, 20))
    starting.start()
    assert shared_helper.ask(folder, "echo", server, None, {"n": 2}, 10)["request"] == {"n": 2}
    assert starting.is_alive()  # the other one is still starting
    starting.join()
    assert shared_helper.ask(folder, "slow", [sys.executable, "-I", str(slow)], None, {"n": 3}, 10)["request"] == \
        {"n": 3}
