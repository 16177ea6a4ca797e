"""The rules about fields KubeRay's code ignores, clamps or overrides (issue 36) state, in each failing case, what
the operator's builder makes of the field: `kuberay: {builder, field, written, effective}` (one entry per
expected finding), so each rule can be checked against KubeRay's own builders; their docstrings name the
KubeRay source (file and function)."""
from __future__ import annotations

from pathlib import Path

import pytest

from compiler.documents.yamlio import load
from compiler.rules import RULES

CASES_DIR = Path(__file__).parent / "cases"


def case_file(rule_id: str) -> Path:
    return CASES_DIR / (rule_id.replace("/", "__") + ".yaml")


OVERRIDE_RULES = (
    "raycluster/false-start-param-dropped",
    "raycluster/forced-start-params",
    "raycluster/memory-request-ignored",
    "raycluster/operator-env-vars",
    "raycluster/pod-template-identity",
    "raycluster/replicas-clamped",
    "raycluster/reserved-pod-labels",
    "rayjob/cluster-selector-ignores-spec",
    "rayjob/submitter-unused",
    "rayservice/deprecated-thresholds",
)


@pytest.mark.parametrize("rule_id", OVERRIDE_RULES)
def test_override_rule_cases_say_what_the_operator_does(rule_id: str) -> None:
    doc = RULES[rule_id].__doc__ or ""
    assert "KubeRay source: `ray-operator/" in doc, "the docstring names the KubeRay file and function"
    data = load(case_file(rule_id).read_text(encoding="utf-8"), str(case_file(rule_id)))
    failing = [c for c in data["cases"] if c.get("expect")]
    assert failing
    for case in failing:
        entries = case.get("kuberay")
        entries = [entries] if isinstance(entries, dict) else entries
        assert isinstance(entries, list) and len(entries) == len(case["expect"]), case["name"]
        for entry in entries:
            assert {"builder", "field", "written", "effective"} <= set(entry), entry
            assert str(entry["written"]) != str(entry["effective"]), entry
