"""A request in two steps (PolicyRun): sent early it gives what one call gives; nothing to check sends nothing;
closing before the answer drops it and leaves the engine serving the next request."""
from __future__ import annotations

from pathlib import Path

from compiler.policy import PolicyInput, PolicyRun, evaluate_each
from compiler.policy.engine import CueEngine

GPU_POLICY = "package policy\n\nenv: groups: [...{gpu: <=8}]\n"


def _policies(tmp_path: Path) -> Path:
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "gpu-cap.cue").write_text(GPU_POLICY)
    return folder


def _inputs(*gpus: int) -> list[PolicyInput]:
    return [PolicyInput(f"env-{i}", {"groups": [{"name": "w", "gpu": g}]}, ()) for i, g in enumerate(gpus)]


def test_started_early_or_not_the_findings_are_those_of_one_call(tmp_path: Path, engine: CueEngine):
    folder, inputs = _policies(tmp_path), _inputs(4, 12, 9)
    with PolicyRun(folder, inputs, engine=engine) as early:
        early.start()
        found = early.results()
    with PolicyRun(folder, inputs, engine=engine) as late:
        assert late.results() == found
    assert found == evaluate_each(folder, inputs, engine=engine)
    assert [len(each) for each in found] == [0, 1, 1]


def test_nothing_to_check_sends_nothing(tmp_path: Path):
    with PolicyRun(_policies(tmp_path), []) as run:
        run.start()
        assert run.results() == []
    empty = tmp_path / "none"
    empty.mkdir()
    with PolicyRun(empty, _inputs(4)) as run:
        assert run.results() == [[]]


def test_a_run_closed_before_its_answer_leaves_the_engine_to_the_next(tmp_path: Path, engine: CueEngine):
    folder = _policies(tmp_path)
    dropped = PolicyRun(folder, _inputs(*range(20)), engine=engine)
    dropped.start()
    dropped.close()
    assert [len(each) for each in evaluate_each(folder, _inputs(9, 1), engine=engine)] == [1, 0]
