"""Helper processes kept up between requests: reuse by command and environment, and every way one can go wrong
(no answer in time, an answer that is not JSON, a helper that dies, idle or mid-request)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from compiler.native import helper_process
from compiler.native.helper_process import HelperFailed, HelperPool, HelperTimeout

# Answers each request line with its own pid and the request; "sleep" waits, "garble" prints no JSON, "die" exits
ECHO = """
import json, os, sys, time
for line in sys.stdin:
    request = json.loads(line)
    if request.get("do") == "sleep":
        time.sleep(30)
    if request.get("do") == "garble":
        print("not json", flush=True)
        continue
    if request.get("do") == "die":
        sys.stderr.write("something broke\\nfor this reason\\n")
        sys.exit(4)
    print(json.dumps({"pid": os.getpid(), "request": request}), flush=True)
"""


@pytest.fixture
def echo(tmp_path: Path) -> list[str]:
    script = tmp_path / "echo.py"
    script.write_text(ECHO, encoding="utf-8")
    return [sys.executable, "-I", str(script)]


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch):
    fresh = HelperPool()
    monkeypatch.setattr(helper_process, "POOL", fresh)
    yield fresh
    fresh.close()


def test_one_helper_answers_request_after_request(echo: list[str], pool: HelperPool) -> None:
    first = helper_process.ask(echo, None, {"n": 1}, 10)
    second = helper_process.ask(echo, None, {"n": 2, "text": "a\nb"}, 10)
    assert first["request"] == {"n": 1} and second["request"] == {"n": 2, "text": "a\nb"}
    assert first["pid"] == second["pid"] != os.getpid()


def test_another_environment_or_a_busy_helper_means_another_process(echo: list[str], pool: HelperPool) -> None:
    plain = helper_process.ask(echo, {"A": "1"}, {}, 10)["pid"]
    assert helper_process.ask(echo, {"A": "2"}, {}, 10)["pid"] != plain
    busy = pool.take(echo, {"A": "1"})  # taken: not idle, so the next request gets a process of its own
    busy.send({"n": 0})
    assert helper_process.ask(echo, {"A": "1"}, {}, 10)["pid"] != busy.receive(10)["pid"]


def test_no_answer_in_time_kills_the_helper(echo: list[str], pool: HelperPool) -> None:
    helper = pool.take(echo, None)
    helper.send({"do": "sleep"})
    with pytest.raises(HelperTimeout):
        helper.receive(0.5)
    assert not helper.alive()
    pool.give_back(helper)  # a dead helper is never kept
    assert helper_process.ask(echo, None, {"n": 1}, 10)["request"] == {"n": 1}


def test_a_helper_that_dies_reports_its_last_words_and_is_replaced(echo: list[str], pool: HelperPool) -> None:
    with pytest.raises(HelperFailed) as failed:
        helper_process.ask(echo, None, {"do": "die"}, 10)
    assert failed.value.stderr.splitlines()[-1] == "for this reason"
    with pytest.raises(HelperFailed):
        helper_process.ask(echo, None, {"do": "garble"}, 10)
    # an idle helper killed from outside: the next request starts another
    pid = helper_process.ask(echo, None, {}, 10)["pid"]
    os.kill(pid, 9)
    assert helper_process.ask(echo, None, {}, 10)["pid"] != pid


def test_closing_the_pool_ends_its_idle_helpers(echo: list[str], pool: HelperPool) -> None:
    helper = pool.take(echo, None)
    helper.send({})
    helper.receive(10)
    pool.give_back(helper)
    pool.close()
    assert not helper.alive()


def test_beside_other_krc_processes_no_helper_waits_idle(echo: list[str], pool: HelperPool,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    idle = pool.take(echo, None)
    idle.send({})
    before = idle.receive(10)["pid"]
    pool.give_back(idle)
    helper_process.POOL.keep_idle(False)  # a command with worker processes (pipeline.jobs) sets this in each of them
    try:
        assert idle.alive()  # one idle from before is left to its idle time, not killed
        first = helper_process.ask(echo, None, {}, 10)["pid"]
        assert first == before and not idle.alive()  # it answered the next request, then ended
        second = helper_process.ask(echo, None, {}, 10)["pid"]
        assert second != first
        assert helper_process.ask(echo, None, {}, 10)["pid"] != second  # each answered, then ended
    finally:
        helper_process.POOL.keep_idle(True)
    again = helper_process.ask(echo, None, {}, 10)["pid"]
    assert helper_process.ask(echo, None, {}, 10)["pid"] == again  # the workers are gone: kept up again


def test_an_idle_helper_that_ended_is_passed_over_for_a_live_one(echo: list[str], pool: HelperPool) -> None:
    first, second = pool.take(echo, None), pool.take(echo, None)
    for helper in (first, second):
        helper.send({})
        helper.receive(10)
        pool.give_back(helper)
    first.kill()  # as if its idle time ran out
    taken = pool.take(echo, None)
    assert taken is second and taken.alive()
    pool.give_back(taken)


def test_a_helper_inherits_only_what_it_needs_to_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NODE_OPTIONS", "--require /tmp/evil.js")
    monkeypatch.setenv("PYTHONPATH", "/tmp/evil")
    monkeypatch.setenv("KRC_HELPER_IDLE_SECONDS", "7")
    env = helper_process.helper_environment(NO_COLOR="1")
    assert "NODE_OPTIONS" not in env and "PYTHONPATH" not in env
    assert env["NO_COLOR"] == "1" and env["KRC_HELPER_IDLE_SECONDS"] == "7" and env["PATH"] == os.environ["PATH"]


def test_end_idle_ends_only_the_idle_helpers_of_the_commands_it_names(echo: list[str], pool: HelperPool) -> None:
    other = [*echo, "other"]
    first, second = pool.take(echo, None), pool.take(other, None)
    for helper in (first, second):
        pool.give_back(helper)
    pool.end_idle(lambda argv: "other" in argv)
    assert not second.alive() and first.alive()
    assert pool.take(echo, None) is first  # the other one is still idle and taken again
    pool.give_back(first)
