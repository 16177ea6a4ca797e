"""The real CUE engine (CUE v0.17 in krc-engine): findings, many environments in one request, what krc says when
there is no engine, and a runaway policy stopped with an error that names it."""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from compiler.cli import main
from compiler.diagnostics.problems import KrcError, Location
from compiler.native import binary, client
from compiler.policy import PolicyInput, evaluate_policies, find_engine
from compiler.policy.engine import CueEngine

GPU_POLICY = """// at most 8 GPUs per worker group
package policy

env: groups: [...{gpu: <=8}]
"""
# 10^8 list elements: far past any deadline or memory limit krc sets
RUNAWAY_POLICY = """package policy

import "list"

_all: [for i in list.Range(0, 100000000, 1) {i}]
total: list.Sum(_all) & <0
"""


def _inputs(*gpus: int) -> list[PolicyInput]:
    return [PolicyInput(f"env-{i}", {"groups": [{"name": "w", "gpu": gpu}]}, (),
                        lambda path, i=i: Location(f"environments/env-{i}.yaml", 7, 5) if path[0] == "env" else None)
            for i, gpu in enumerate(gpus)]


def _write_policy(tmp_path: Path, text: str = GPU_POLICY, name: str = "gpu-cap") -> Path:
    policies = tmp_path / "policies"
    policies.mkdir(exist_ok=True)
    (policies / f"{name}.cue").write_text(text)
    return policies


def test_a_finding_names_the_environment_line_and_the_policy_line(tmp_path, engine):
    problems = evaluate_policies(_write_policy(tmp_path), _inputs(8, 12, 0), engine=engine,
                                 show_path=lambda p: f"policies/{p.name}")
    assert [p.rule for p in problems] == ["policy/gpu-cap"]
    [problem] = problems
    assert problem.location == Location("environments/env-1.yaml", 7, 5)
    assert problem.message == ("environment env-1: env.groups[w].gpu: invalid value 12 (out of bound <=8); "
                               "policy policies/gpu-cap.cue:4:24; value set at environments/env-1.yaml:7:5")
    assert problem.segments == ("env", "groups", 0, "gpu")


def test_many_environments_share_one_request(tmp_path, engine):
    """40 environments x 2 policies in one request: every violation is found, each under its own environment."""
    policies = _write_policy(tmp_path)
    (policies / "named.cue").write_text(
        'package policy\n\nenv: name: =~"^env-[0-9]+$"\nenv: groups: [...{name: "w"}]\n')
    gpus = [i % 13 for i in range(40)]
    inputs = [PolicyInput(i.name, {**i.environment, "name": i.name}, ()) for i in _inputs(*gpus)]
    problems = evaluate_policies(policies, inputs, engine=engine)
    flagged = sorted(int(p.message.split()[1].removeprefix("env-").rstrip(":")) for p in problems)
    assert flagged == [i for i, g in enumerate(gpus) if g > 8]
    assert {p.rule for p in problems} == {"policy/gpu-cap"}


def test_the_engine_description_follows_the_binary(tmp_path, monkeypatch, engine):
    """The policy cache keys on it: another build (perhaps another CUE) is another engine."""
    copy = tmp_path / "krc-engine"
    copy.write_bytes(binary.engine_binary().read_bytes())
    copy.chmod(0o755)
    monkeypatch.setenv(binary.VARIABLE, str(copy))
    assert find_engine() != engine
    assert find_engine() == find_engine()


def test_no_engine_is_an_input_error_saying_how_to_build_it(tmp_path, monkeypatch, project):
    monkeypatch.setenv(binary.VARIABLE, str(tmp_path / "no-such-engine"))
    with pytest.raises(KrcError, match="is not an executable file"):
        find_engine()
    monkeypatch.delenv(binary.VARIABLE)
    monkeypatch.setattr(binary, "PACKAGED", tmp_path / "none")
    monkeypatch.setattr(binary, "CHECKOUT", tmp_path / "none")
    with pytest.raises(KrcError, match="make engine"):
        find_engine()


def test_a_runaway_policy_is_stopped_with_an_error_naming_the_policies(tmp_path, monkeypatch, engine):
    policies = _write_policy(tmp_path, RUNAWAY_POLICY, "runaway")
    monkeypatch.setenv("KRC_POLICY_SECONDS", "3")
    started = time.monotonic()
    try:
        with pytest.raises(KrcError) as raised:
            evaluate_policies(policies, _inputs(1), engine=engine, show_path=lambda p: f"policies/{p.name}")
    finally:
        client.close_engine()  # the next test starts a new engine
    assert time.monotonic() - started < 30
    message = str(raised.value)
    assert "the policies policies/runaway.cue on environment env-0" in message
    # the deadline, or before it the engine's memory limit: either way the user learns what to look at
    assert ("did not finish within 3 s and was stopped; look for a runaway loop or expansion in it" in message
            or "went over its memory limit" in message), message


def test_a_runaway_policy_through_the_command_exits_2_with_one_line(tmp_path, monkeypatch, project):
    (project.policies_dir / "runaway.cue").write_text(RUNAWAY_POLICY)
    monkeypatch.setenv("KRC_POLICY_SECONDS", "3")
    try:
        result = CliRunner().invoke(main, ["--project", str(project.root), "policy", "dev"])
    finally:
        client.close_engine()
    assert result.exit_code == 2, result.output
    error, hint = result.stderr.strip().splitlines()  # krc's form: the error, then what to do
    assert error.startswith("krc: error: the policies ") and "policies/runaway.cue on environment dev" in error
    assert error.endswith("did not finish within 3 s and was stopped")
    assert hint == "  help: look for a runaway loop or expansion in it"
    assert "Traceback" not in result.output


def test_the_engine_names_its_cue(engine: CueEngine):
    assert client.call("version", {}, what="the engine's versions", timeout=30)["cuelang.org/go"] == "v0.17.1"
