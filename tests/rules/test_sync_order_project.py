"""argocd/sync-order over the project's own Applications: krc's layout passes, the layout it replaced fails."""
from __future__ import annotations

import pytest

from compiler import pipeline
from compiler.project.paths import Project

# not about policies: no CUE engine run (tests/policy/ and tests/lint/test_lint_policies.py are)
pytestmark = pytest.mark.usefixtures("project_without_policies")


RULE = "argocd/sync-order"


def _sync_findings(project: Project) -> list[str]:
    return [p.message for p in pipeline.lint_environments(project, ["dev", "prod-eks-gpu"]) if p.rule == RULE]


def test_project_layout_converges(project: Project) -> None:
    assert _sync_findings(project) == []


def test_previous_layout_fails(project: Project) -> None:
    # the layout before: the CRDs app's spec without the chart version, synced with the workloads (wave 0), i.e.
    # after the operator (wave -1), whose Roles in the watched namespaces then come before those namespaces
    template = project.templates_dir / "objects" / "argocd.jsonnet"
    text = template.read_text(encoding="utf-8")
    text = text.replace("{ crds: 'only', chartVersion: chart.version }", "{ crds: 'only' }")
    text = text.replace("prefix(cd) + '-crds', -2,", "prefix(cd) + '-crds', 0,")
    template.write_text(text, encoding="utf-8")
    findings = _sync_findings(project)
    assert any("Application krc-prod-eks-gpu-operator (wave -1) creates Role kuberay-operator in namespace "
               "ray-prod before anything creates that namespace" in f for f in findings), findings
    assert any("krc-dev-operator starts the operator before its CRDs are applied" in f for f in findings), findings
    assert any("krc-prod-eks-gpu-crds deploys the CRDs but its spec does not name chart version 1.6.2" in f
               for f in findings), findings
