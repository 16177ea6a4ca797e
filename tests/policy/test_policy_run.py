"""An engine run in two steps (PolicyRun): started early it gives what one call gives, and closing it stops the
engine and removes its workspace whatever state it is in."""
from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from pathlib import Path

import pytest
from process_support import wait_until_ended

from compiler.policy import PolicyInput, PolicyRun, evaluate_each
from compiler.policy.engine import CueEngine
from compiler.problems import KrcError

GPU_POLICY = "package policy\n\nenv: groups: [...{gpu: <=8}]\n"


def _policies(tmp_path: Path) -> Path:
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "gpu-cap.cue").write_text(GPU_POLICY)
    return folder


def _inputs(*gpus: int) -> list[PolicyInput]:
    return [PolicyInput(f"env-{i}", {"groups": [{"name": "w", "gpu": g}]}, ()) for i, g in enumerate(gpus)]


def test_started_early_or_not_the_findings_are_those_of_one_call(tmp_path: Path, wasm: CueEngine):
    folder, inputs = _policies(tmp_path), _inputs(4, 12, 9)
    with PolicyRun(folder, inputs, engine=wasm) as early:
        early.start()
        found = early.results()
    with PolicyRun(folder, inputs, engine=wasm) as late:
        assert late.results() == found
    assert found == evaluate_each(folder, inputs, engine=wasm)
    assert [len(each) for each in found] == [0, 1, 1]


def test_closing_stops_a_running_engine_and_removes_its_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    pid_file = tmp_path / "engine.pid"
    slow = CueEngine(("/bin/sh", "-c", f'echo $$ > "{pid_file}"; exec sleep 60', "cue"), "a slow engine")
    run = PolicyRun(_policies(tmp_path), _inputs(4), engine=slow)
    run.start()
    [workspace] = scratch.iterdir()
    assert {p.name for p in workspace.glob("*.cue")} == {"inputs.cue", "policy_0.cue"}
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.01)  # the shell has started but not yet written its process id
    pid = int(pid_file.read_text())
    run.close()
    assert list(scratch.iterdir()) == []
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_nothing_to_check_starts_nothing(tmp_path: Path):
    never = CueEngine((str(tmp_path / "no-such-cue"),), "an engine that cannot start")
    with PolicyRun(_policies(tmp_path), [], engine=never) as run:
        run.start()
        assert run.results() == []
    empty = tmp_path / "none"
    empty.mkdir()
    with PolicyRun(empty, _inputs(4), engine=never) as run:
        assert run.results() == [[]]


def test_an_engine_that_cannot_start_leaves_no_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    missing = CueEngine((str(tmp_path / "no-such-cue"),), "an engine that cannot start")
    run = PolicyRun(_policies(tmp_path), _inputs(4), engine=missing)
    with pytest.raises(KrcError, match="could not start an engine that cannot start"):
        run.start()
    assert list(scratch.iterdir()) == []


def _logging_serve_command(tmp_path: Path, wasm: CueEngine) -> tuple[str, ...]:
    """The WebAssembly engine's serving argv behind a shell that logs each start (the engine's process id)."""
    log = tmp_path / "starts.log"
    return ("/bin/sh", "-c", f'echo $$ >> "{log}"; exec "$@"', "engine", *wasm.serve_command)


def _starts(tmp_path: Path) -> int:
    log = tmp_path / "starts.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_one_engine_process_serves_run_after_run_until_it_has_been_idle(
        tmp_path: Path, wasm: CueEngine, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KRC_HELPER_IDLE_SECONDS", "0.5")
    logged = dataclasses.replace(wasm, serve_command=_logging_serve_command(tmp_path, wasm))
    folder = _policies(tmp_path)
    runs = [evaluate_each(folder, _inputs(*gpus), engine=logged) for gpus in ((4, 12), (9,), (1, 2, 30))]
    assert [[len(each) for each in run] for run in runs] == [[0, 1], [1], [0, 0, 1]]
    assert _starts(tmp_path) == 1  # each run a new CUE instance in the same Node process
    # idle past KRC_HELPER_IDLE_SECONDS, the engine exits by itself; the next run starts another
    assert wait_until_ended(int((tmp_path / "starts.log").read_text().split()[0]))
    assert evaluate_each(folder, _inputs(9), engine=logged) == runs[1]
    assert _starts(tmp_path) == 2


def test_closing_mid_run_kills_a_served_engine(tmp_path: Path):
    pid_file = tmp_path / "engine.pid"
    slow = CueEngine((), "a slow engine", ("/bin/sh", "-c", f'echo $$ > "{pid_file}"; exec sleep 60'))
    run = PolicyRun(_policies(tmp_path), _inputs(4), engine=slow)
    run.start()
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.01)
    pid = int(pid_file.read_text())
    run.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_an_idle_time_that_is_not_a_number_is_bad_input(tmp_path: Path, wasm: CueEngine,
                                                          monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KRC_HELPER_IDLE_SECONDS", "soon")
    with pytest.raises(KrcError, match="KRC_HELPER_IDLE_SECONDS='soon' is not a number of seconds"):
        evaluate_each(_policies(tmp_path), _inputs(4), engine=wasm)
