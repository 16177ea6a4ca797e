"""The quality bar on the upstream samples: no false errors, and exactly the gate findings with default gates."""
from __future__ import annotations

from pathlib import Path

import pytest

from compiler.diagnostics.problems import Problem
from compiler.lint.manifest_files import paths_context
from compiler.lint.runner import lint_objects

ALL_ALPHA_GATES = ("RayCronJob=true,RayClusterMTLS=true,RayClusterNetworkPolicy=true,RayClusterHistoryServer=true,"
                   "GCSFaultToleranceEmbeddedStorage=true")
GATED = {
    "ray-cluster.embedded-gcs-ft.yaml": "GCSFaultToleranceEmbeddedStorage",
    "ray-cluster.historyserver.yaml": "RayClusterHistoryServer",
    "ray-cluster.mtls.yaml": "RayClusterMTLS",
    "ray-cluster.network-policy-deny-all.yaml": "RayClusterNetworkPolicy",
    "ray-cronjob.sample.yaml": "RayCronJob",
    "ray-cronjob-timezone.sample.yaml": "RayCronJob",
}


@pytest.fixture(scope="module")
def samples(shared_dir: Path) -> Path:
    return shared_dir / "kuberay" / "samples"


def _lint(samples: Path, gates: str) -> list[Problem]:
    return lint_objects(paths_context([samples], "1.7.0", gates, samples))


def test_every_sample_lints_without_error_with_all_gates_on(samples: Path) -> None:
    problems = _lint(samples, ALL_ALPHA_GATES)
    errors = [p.one_line() for p in problems if p.severity == "error"]
    assert errors == []
    assert len({p.location.file for p in problems}) < 20, "warnings stay rare on the reference corpus"


def test_default_gates_give_each_gated_sample_exactly_its_gate_finding(samples: Path) -> None:
    problems = _lint(samples, "")
    gate_findings = [p for p in problems if p.rule.startswith("feature-gates/")]
    by_file = {Path(p.location.file).name: p for p in gate_findings}
    assert len(gate_findings) == len(GATED) == len(by_file)
    for name, gate in GATED.items():
        assert gate in by_file[name].message, by_file[name].one_line()
    errors = {Path(p.location.file).name for p in problems if p.severity == "error"}
    assert errors == {n for n, g in GATED.items() if g != "RayCronJob"}, "only the four rejected samples fail"


def test_samples_are_found_recursively_with_positions(samples: Path) -> None:
    context = paths_context([samples], "1.7.0", "", samples)
    files = {o.location.file for o in context.objects}
    assert len(files) == 94
    assert all(o.location.line >= 1 and o.positions for o in context.objects)
