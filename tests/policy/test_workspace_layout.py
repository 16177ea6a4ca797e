"""All policies share one CUE package in the workspace, each in a file of its own: its imports stay its own, its
declarations sit inside a wrapper line krc adds, and every position CUE reports maps back to the user's file."""
from __future__ import annotations

from pathlib import Path

import pytest

from compiler.policy import PolicyInput, evaluate_policies
from compiler.policy.engine import CueEngine
from compiler.policy.workspace import Policy, Workspace, read_policy, wrap_policy
from compiler.problems import KrcError, Location

LIMITS = """// every kind of import CUE has
package limits

import "list"
import s "strings"
import (
\t"math"
\t// a comment inside the group
\t"regexp"
)

// the declarations start here
_names: [for g in env.groups {s.ToUpper(g.name)}]
_ok: regexp.Match("^[A-Z]+$", _names[0]) & true
_pi: math.Pi
env: groups: [...{gpu: <=8}]
totalGpus: list.Sum([for g in env.groups {g.gpu}]) & <=10
"""
GPU_LINE = LIMITS.split("\n").index("env: groups: [...{gpu: <=8}]") + 1
TOTAL_LINE = GPU_LINE + 1


def _inputs(*gpus: int) -> list[PolicyInput]:
    return [PolicyInput(f"env-{i}", {"groups": [{"name": "w", "gpu": gpu}]}, (),
                        lambda path, i=i: Location(f"environments/env-{i}.yaml", 3, 5))
            for i, gpu in enumerate(gpus)]


def test_each_environment_gets_a_copy_of_the_declarations_and_positions_map_to_the_users_lines():
    policy = Policy("limits", Path("limits.cue"), "policies/limits.cue", "limits", LIMITS)
    wrapped = wrap_policy(policy, 0, 3)
    written = Workspace((), (policy,), (wrapped,))
    lines, original = wrapped.text.split("\n"), LIMITS.split("\n")
    assert lines[1] == "package check"
    assert original[wrapped.preamble] == "_names: [for g in env.groups {s.ToUpper(g.name)}]"  # after the imports
    assert lines[:wrapped.preamble] == [original[0], "package check", *original[2:wrapped.preamble]]
    for copy in range(3):
        opening = wrapped.preamble + copy * wrapped.stride  # 0-based index of krc's line for environment `copy`
        assert lines[opening] == (f"krcPolicyResults: e{copy}: p0: {{env: #krcInput{copy}.env, objects: []")
        assert lines[opening + 1:opening + wrapped.stride - 1] == original[wrapped.preamble:]
        assert lines[opening + wrapped.stride - 1] == "}"
        assert written.policy_position("./policy_0.cue", opening + 1, 3) is None
        for number in range(wrapped.preamble + 1, len(original) + 1):
            there = opening + 1 + number - wrapped.preamble
            assert written.policy_position("./policy_0.cue", there, 7) == (0, Location("policies/limits.cue",
                                                                                      number, 7))
        # an unclosed brace in the policy: CUE reports the end of the file, krc's closing brace
        assert written.policy_position("./policy_0.cue", opening + wrapped.stride, 1) == (
            0, Location("policies/limits.cue", len(original), 1))
    assert written.policy_position("./policy_0.cue", 4, 7) == (0, Location("policies/limits.cue", 4, 7))
    assert written.policy_position("./inputs.cue", 3, 1) is None
    assert written.policy_position("./policy_1.cue", 3, 1) is None  # no such policy


def test_positions_name_the_users_lines_under_every_kind_of_import(tmp_path: Path, wasm: CueEngine):
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "limits.cue").write_text(LIMITS)
    (folder / "names.cue").write_text('package policy\n\nenv: groups: [...{name: =~"^[a-z]+$"}]\n')
    found = evaluate_policies(folder, _inputs(4, 9, 6, 6), engine=wasm, show_path=lambda p: f"policies/{p.name}")
    assert [(p.rule, p.message.split(":")[0]) for p in found] == [("policy/limits", "environment env-1")]
    [problem] = found
    assert "env.groups[w].gpu: invalid value 9 (out of bound <=8)" in problem.message
    assert f"policy policies/limits.cue:{GPU_LINE}:" in problem.message


def test_a_name_the_policy_never_declared_or_imported_is_a_broken_policy(tmp_path: Path, wasm: CueEngine):
    """Not a finding of each environment: CUE in WebAssembly reports it at an environment's value, krc blames the
    policy line, as when each policy was a package of its own."""
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "a.cue").write_text("package policy\n\nenv: name: =~\"^e\"\n")
    (folder / "b.cue").write_text("package policy\n\nenv: name: strings.MaxRunes(20)\n")
    with pytest.raises(KrcError) as raised:
        evaluate_policies(folder, _inputs(1, 2), engine=wasm, show_path=lambda p: f"policies/{p.name}")
    assert str(raised.value) == ('policies/b.cue:3:12: error: CUE cannot evaluate this policy: reference "strings" '
                                 "not found; fix the policy")


def test_a_policy_file_may_take_the_name_of_a_workspace_file(tmp_path: Path, wasm: CueEngine):
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "check.cue").write_text("package policy\n\nenv: groups: [...{gpu: <=8}]\n")
    assert read_policy(folder / "check.cue", "policies/check.cue").name == "check"
    [problem] = evaluate_policies(folder, _inputs(12), engine=wasm, show_path=lambda p: f"policies/{p.name}")
    assert problem.rule == "policy/check" and "policy policies/check.cue:3:" in problem.message
