"""A policy file as CUE sees it: its imports are its own, every position names the user's own line, and a policy
CUE cannot evaluate is an input error at its line, not a finding of each environment."""
from __future__ import annotations

from pathlib import Path

import pytest

from compiler.diagnostics.problems import KrcError, Location
from compiler.policy import PolicyInput, evaluate_policies
from compiler.policy.engine import CueEngine

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


def _folder(tmp_path: Path, **files: str) -> Path:
    folder = tmp_path / "policies"
    folder.mkdir()
    for name, text in files.items():
        (folder / f"{name}.cue").write_text(text)
    return folder


def _shown(path: Path) -> str:
    return f"policies/{path.name}"


def test_positions_name_the_users_lines_under_every_kind_of_import(tmp_path: Path, engine: CueEngine):
    folder = _folder(tmp_path, limits=LIMITS, names='package policy\n\nenv: groups: [...{name: =~"^[a-z]+$"}]\n')
    two_groups = PolicyInput("env-two", {"groups": [{"name": "a", "gpu": 6}, {"name": "b", "gpu": 6}]}, ())
    found = evaluate_policies(folder, [*_inputs(4, 9, 6), two_groups], engine=engine, show_path=_shown)
    assert [(p.rule, p.message.split(":")[0]) for p in found] == [("policy/limits", "environment env-1"),
                                                                  ("policy/limits", "environment env-two")]
    assert "env.groups[w].gpu: invalid value 9 (out of bound <=8)" in found[0].message
    assert f"policy policies/limits.cue:{GPU_LINE}:" in found[0].message
    # a field the policy adds at the top level is checked too, at its own line
    assert found[1].message.startswith("environment env-two: totalGpus: invalid value 12 (out of bound <=10)")
    assert f"policy policies/limits.cue:{TOTAL_LINE}:" in found[1].message


@pytest.mark.parametrize(("text", "line", "message"), [
    ("package policy\n\nenv: name: strings.MaxRunes(20)\n", 3, 'reference "strings" not found'),
    ("package policy\n\nenv: {\n\tproduction: bool\n\n", 5, "expected '}', found 'EOF'"),
    ('package policy\n\nimport "strngs"\n\nenv: name: strngs.MaxRunes(20)\n', 3, 'builtin package "strngs" undefined'),
    ('package policy\n\nimport "example.com/rules"\n\nenv: name: rules.Name\n', 3,
     'import "example.com/rules": a policy can import only CUE\'s standard library'),
])
def test_a_policy_cue_cannot_evaluate_is_an_input_error_at_its_line(tmp_path: Path, engine: CueEngine, text: str,
                                                                    line: int, message: str):
    """Not a finding of each environment: krc blames the policy line, and only the broken policy."""
    folder = _folder(tmp_path, a='package policy\n\nenv: name: =~"^e"\n', b=text)
    with pytest.raises(KrcError) as raised:
        evaluate_policies(folder, _inputs(1, 2), engine=engine, show_path=_shown)
    [problem] = raised.value.problems
    assert problem.location is not None and (problem.location.file, problem.location.line) == ("policies/b.cue", line)
    assert problem.message.startswith(f"CUE cannot evaluate this policy: {message}")
    assert problem.message.endswith("; fix the policy")


def test_a_policy_may_read_env_and_objects_without_declaring_them(tmp_path: Path, engine: CueEngine):
    folder = _folder(tmp_path, reads="package policy\n\nif env.production {\n\t_n: len(objects) & <1\n}\n")
    prod = PolicyInput("prod", {"production": True}, ({"kind": "ConfigMap", "metadata": {"name": "x"}},))
    dev = PolicyInput("dev", {"production": False}, prod.objects)
    [problem] = evaluate_policies(folder, [prod, dev], engine=engine, show_path=_shown)
    assert problem.message.startswith("environment prod: _n: invalid value 1 (out of bound <1)")
    assert "policy policies/reads.cue:4:" in problem.message
