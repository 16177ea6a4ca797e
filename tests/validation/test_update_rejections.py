"""Updates the API server rejects (the engine's `validate` op, apiextensions-apiserver's own code): a RayCluster's
`spec.managedBy` accepted into golden/ and then changed is reported by krc diff, check and golden."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from compiler.charts.package import read_chart
from compiler.cli import main
from compiler.k8s.objects import RenderedObject
from compiler.project.paths import Project
from compiler.validation.server_updates import RULE, update_rejections

MANAGED = "ray.io/kuberay-operator"
MULTIKUEUE = "kueue.x-k8s.io/multikueue"
GOLDEN = "golden/dev/manifests/raycluster-ray-cpu-demo.yaml"


def run(project: Project, *args: str):
    return CliRunner().invoke(main, ["--project", str(project.root), *args])


def manage(project: Project, manager: str) -> None:
    """dev's RayCluster with spec.managedBy (through the environment's `raw` spec fields)."""
    path = project.environment_file("dev")
    text = path.read_text(encoding="utf-8")
    marker = "  - name: ray-cpu-demo\n"
    text = re.sub(r"\n    raw: \{managedBy: [^}]*\}", "", text)
    assert marker in text
    path.write_text(text.replace(marker, f"{marker}    raw: {{managedBy: {manager}}}\n"), encoding="utf-8")


@pytest.mark.usefixtures("project_without_policies")
def test_a_changed_managed_by_is_an_error_of_diff_check_and_golden(project: Project):
    manage(project, MANAGED)
    accepted = run(project, "golden", "dev")
    assert accepted.exit_code == 0, accepted.output
    golden = yaml.safe_load((project.root / GOLDEN).read_text(encoding="utf-8"))
    assert golden["spec"]["managedBy"] == MANAGED

    manage(project, MULTIKUEUE)
    diff = run(project, "diff", "dev")
    assert diff.exit_code == 1, diff.output
    assert RULE in diff.output and "the managedBy field is immutable" in diff.output
    assert "Force=true,Replace=true" in diff.output and "spec.managedBy" in diff.output

    check = run(project, "check", "dev")
    assert check.exit_code == 2, check.output
    assert "the managedBy field is immutable" in check.output and RULE in check.output
    assert "environments/dev.yaml" in check.output  # where the cluster is set

    refused = run(project, "golden", "dev")
    assert refused.exit_code == 2, refused.output
    assert "the managedBy field is immutable" in refused.output
    golden = yaml.safe_load((project.root / GOLDEN).read_text(encoding="utf-8"))
    assert golden["spec"]["managedBy"] == MANAGED  # golden/ is left as it was


def _cluster(manager: str, annotations: dict[str, str] | None = None) -> dict:
    meta: dict = {"name": "demo", "namespace": "ray"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": meta, "spec": {
        "managedBy": manager,
        "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [
            {"name": "ray-head", "image": "rayproject/ray:2.58.0-py312"}]}}}}}


def _golden(document: dict) -> dict[str, bytes]:
    return {"manifests/raycluster-demo.yaml": yaml.safe_dump(document).encode()}


def test_only_updates_are_judged_and_recreation_is_not(charts_dir: Path):
    crds = read_chart(charts_dir / "kuberay-operator-1.7.0.tgz").crds  # the upstream chart's CRDs
    changed = RenderedObject(_cluster(MULTIKUEUE), "templates/objects/rayclusters.jsonnet", None)
    [problem] = update_rejections(crds, [changed], _golden(_cluster(MANAGED)))
    assert problem.rule == RULE and problem.severity == "error" and problem.segments == ("spec", "managedBy")
    assert problem.object == "RayCluster/ray/demo" and "Force=true,Replace=true" in problem.help
    # new in the render (nothing in golden/), or unchanged: nothing to ask
    assert update_rejections(crds, [changed], {}) == []
    assert update_rejections(crds, [changed], _golden(_cluster(MULTIKUEUE))) == []
    # Argo CD deletes and creates it: no update happens
    recreated = RenderedObject(_cluster(MULTIKUEUE, {"argocd.argoproj.io/sync-options": "Force=true,Replace=true"}),
                               "templates/objects/rayclusters.jsonnet", None)
    assert update_rejections(crds, [recreated], _golden(_cluster(MANAGED))) == []
    # a change the rules allow
    scaled = _cluster(MANAGED)
    scaled["spec"]["rayVersion"] = "2.58.0"
    allowed = RenderedObject(scaled, "templates/objects/rayclusters.jsonnet", None)
    assert update_rejections(crds, [allowed], _golden(_cluster(MANAGED))) == []
