"""A policy that never names `objects` is unified with an empty list instead of the rendered objects (less engine
time, engine/policy.go); its findings and those of policies that read the objects are what they are with the
objects given."""
from __future__ import annotations

from pathlib import Path

from compiler.diagnostics.problems import Location
from compiler.policy import PolicyInput, evaluate_policies
from compiler.policy.engine import CueEngine

GPU_ONLY = "// at most 8 GPUs per group\npackage policy\n\nenv: groups: [...{gpu: <=8}]\n"
NAMED = "// every object's name starts with ok-\npackage policy\n\nobjects: [...{metadata: name: =~\"^ok-\"}]\n"


def _inputs() -> list[PolicyInput]:
    objects = ({"kind": "ConfigMap", "metadata": {"name": "bad-name"}},)
    return [PolicyInput(f"env-{i}", {"groups": [{"name": "w", "gpu": gpu}]}, objects,
                        lambda path, i=i: Location(f"environments/env-{i}.yaml", 3, 1))
            for i, gpu in enumerate((4, 16))]


def _policies(tmp_path: Path) -> Path:
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "gpu-cap.cue").write_text(GPU_ONLY)
    (folder / "names.cue").write_text(NAMED)
    return folder


def test_findings_of_both_kinds_of_policy(tmp_path: Path, engine: CueEngine):
    found = evaluate_policies(_policies(tmp_path), _inputs(), engine=engine)
    by_rule: dict[str, list[str]] = {}
    for problem in found:
        by_rule.setdefault(problem.rule, []).append(problem.location.file if problem.location else "")
    assert by_rule["policy/gpu-cap"] == ["environments/env-1.yaml"]  # 16 GPUs; env-0's 4 pass
    assert sorted(by_rule["policy/names"]) == ["environments/env-0.yaml", "environments/env-1.yaml"]
