"""golden/ is edited by hand and arrives in pull requests: whatever shape a golden manifest takes, `krc diff` reviews
it (exit 0 or 1) or names the file (exit 2), and never fails with an internal error."""
from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from review_support import run

from compiler.project.paths import Project

# the wrong shapes a field can take: each replaces one node of one golden manifest
WRONG = st.sampled_from([["x"], "x", 5, -1, 1.5, True, None, {}, {"a": 1}, [], [{"a": 1}]])


def _nodes(node: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [at]
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        found += _nodes(child, (*at, key))
    return found


def _replaced(document: Any, at: tuple[Any, ...], value: Any) -> Any:
    if not at:
        return value
    parent = document
    for step in at[:-1]:
        parent = parent[step]
    parent[at[-1]] = value
    return document


def _assert_reviewed_or_refused(project: Project, shown: str) -> None:
    result = run(project, "diff")
    assert result.exit_code in (0, 1, 2), f"{shown}: {result.output}"
    assert "internal error" not in result.output and "Traceback" not in result.output, shown
    if result.exit_code == 2:
        assert "golden/" in result.output, result.output  # the error names the golden file


@settings(max_examples=max(5, settings.default.max_examples // 3), derandomize=True,  # a review per example
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_golden_manifest_of_any_shape_is_reviewed_or_named(accepted: Project, data: st.DataObject):
    files = sorted(p for p in accepted.golden_dir.rglob("*.yaml") if p.parent.name in ("manifests", "chart"))
    path = data.draw(st.sampled_from(files))
    original = path.read_bytes()
    document = yaml.safe_load(original)
    at = data.draw(st.sampled_from(_nodes(document)))
    try:
        path.write_text(yaml.safe_dump(_replaced(document, at, data.draw(WRONG))), encoding="utf-8")
        _assert_reviewed_or_refused(accepted, f"{path.relative_to(accepted.root)} at {at}")
    finally:
        path.write_bytes(original)


# found by the test above (each was an internal error): a manifest with no apiVersion, metadata that is not a map,
# a head group, a Role's rules or a container's resources of the wrong type
@pytest.mark.parametrize("file, old, new", [
    ("dev/manifests/raycluster-ray-cpu-demo.yaml", "apiVersion: ray.io/v1\n", ""),
    ("dev/manifests/namespace-ray-demo.yaml", "metadata:\n", "metadata: [x]\nthe-old-metadata:\n"),
    ("dev/manifests/raycluster-ray-cpu-demo.yaml", "  headGroupSpec:\n", "  headGroupSpec: [x]\n  old-head:\n"),
    ("dev/chart/role-kuberay-operator.yaml", "rules:\n", "rules: 5\nold-rules:\n"),
])
def test_each_crash_found_is_bad_input_or_a_review(accepted: Project, file: str, old: str, new: str):
    path = accepted.golden_dir / file
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    _assert_reviewed_or_refused(accepted, file)
