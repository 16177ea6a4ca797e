"""`krc show` covers everything an environment deploys, and every command counts objects the same way
(issue 34, item 3)."""
from __future__ import annotations

import json
import re

import yaml
from review_support import run

from compiler.project.paths import Project


def _golden_objects(project: Project, name: str) -> int:
    folder = project.golden_dir / name
    return sum(1 for sub in ("manifests", "chart") for _ in (folder / sub).glob("*.yaml"))


def test_show_holds_the_charts_objects_and_with_crds_its_crds(accepted: Project):
    deployment = run(accepted, "show", "dev", "--kind", "Deployment")
    assert deployment.exit_code == 0, deployment.output
    [operator] = list(yaml.safe_load_all(deployment.stdout))
    assert operator["metadata"]["name"] == "kuberay-operator"
    assert operator == yaml.safe_load((accepted.golden_dir / "dev" / "chart" /
                                       "deployment-kuberay-operator.yaml").read_text())
    everything = json.loads(run(accepted, "show", "dev", "-o", "json").stdout)
    assert len(everything) == _golden_objects(accepted, "dev")
    assert "CustomResourceDefinition" not in {o["kind"] for o in everything}

    with_crds = json.loads(run(accepted, "show", "dev", "--crds", "-o", "json").stdout)
    crds = [o for o in with_crds if o["kind"] == "CustomResourceDefinition"]
    lock = yaml.safe_load((accepted.golden_dir / "dev" / "crds.lock.yaml").read_text())
    assert sorted(c["metadata"]["name"] for c in crds) == sorted(c["name"] for c in lock["crds"])
    assert len(with_crds) == len(everything) + len(crds)
    only = json.loads(run(accepted, "show", "dev", "--crds", "--kind", "crd", "-o", "json").stdout)
    assert only == crds
    refused = run(accepted, "show", "dev", "--kind", "CustomResourceDefinition")
    assert refused.exit_code == 2 and "the chart's CRDs are shown with --crds" in refused.stderr


def test_render_show_and_diff_count_the_same_objects(accepted: Project):
    expected = _golden_objects(accepted, "dev")
    rendered = run(accepted, "render", "dev")
    assert re.search(rf"^rendered dev: {expected} objects, \d+ CRDs of kuberay-operator", rendered.stdout, re.M), \
        rendered.stdout
    assert f"== dev: no change ({expected} objects)" in run(accepted, "diff", "dev").stdout
    assert len(json.loads(run(accepted, "show", "dev", "-o", "json").stdout)) == expected
