"""The operator chart's objects (helm template with the pinned Helm) in the review: restarts, gates, RBAC, and the
ordered commands for plain Helm users; a downgrade is called one."""
from __future__ import annotations

import pytest
from review_support import diff_json, edit, run, set_chart_version

from compiler.project.paths import Project

# not about policies: no CUE engine run (the checks policies add are test_review_checks.py's subject)
pytestmark = pytest.mark.usefixtures("project_without_policies")

PROD = "prod-eks-gpu"


def _labels(report: dict, environment: str, kind: str, name: str, namespace: str) -> list[dict]:
    env = next(e for e in report["environments"] if e["name"] == environment)
    change = next(o for o in env["objects"] if o["id"]["kind"] == kind and o["id"]["name"] == name
                  and o["id"]["namespace"] == namespace)
    return change["labels"]


def test_golden_holds_the_chart_objects(accepted: Project):
    for environment, watched in (("dev", "ray-demo"), (PROD, "ray-prod")):
        chart = accepted.golden_dir / environment / "chart"
        assert sorted(p.name for p in chart.iterdir()) == [
            "deployment-kuberay-operator.yaml", "role-kuberay-operator-leader-election.yaml",
            "role-kuberay-operator.yaml", "rolebinding-kuberay-operator-leader-election.yaml",
            "rolebinding-kuberay-operator.yaml", "service-kuberay-operator.yaml",
            "serviceaccount-kuberay-operator.yaml"]
        assert f"namespace: {watched}" in (chart / "role-kuberay-operator.yaml").read_text()
        assert "--watch-namespace" in (chart / "deployment-kuberay-operator.yaml").read_text()


def test_chart_bump_shows_restart_gates_and_rbac(accepted: Project):
    set_chart_version(accepted, PROD, "1.6.2", "1.7.0")
    report = diff_json(accepted)
    restart = [label["message"] for label in _labels(report, PROD, "Deployment", "kuberay-operator", "kuberay-system")
               if label["code"] == "operator-restart"]
    assert len(restart) == 1 and "operator:v1.6.2 -> quay.io/kuberay/operator:v1.7.0" in restart[0]
    assert "RayClusterMTLS=false" in restart[0]
    rbac = [label["message"] for label in _labels(report, PROD, "Role", "kuberay-operator", "ray-prod")]
    added = next(m for m in rbac if m.startswith("permissions gained in namespace ray-prod"))
    removed = next(m for m in rbac if m.startswith("permissions lost in namespace ray-prod"))
    assert "persistentvolumeclaims: create, delete, get, list, patch, update, watch" in added
    assert "secrets: delete, update" in added and "networking.k8s.io/networkpolicies" in added
    assert "cert-manager.io/issuers" in added and "events.k8s.io/events: create, patch" in added
    assert removed.endswith("events: create, delete, get, list, patch, update, watch")

    text = run(accepted, "diff", PROD).output
    commands = text[text.index("With plain Helm, in this order:"):]
    crds = commands.index("kubectl apply --server-side --force-conflicts -f rendered/prod-eks-gpu/crds/")
    helm = commands.index("helm upgrade --install kuberay-operator kuberay-operator --repo "
                          "https://ray-project.github.io/kuberay-helm/ --version 1.7.0 --namespace kuberay-system "
                          "--skip-crds --values rendered/prod-eks-gpu/helm/kuberay-operator.values.yaml")
    assert crds < helm
    assert "DOWNGRADE" not in text


def test_older_chart_is_a_downgrade(accepted: Project):
    edit(accepted.environment_file("dev"), "operator:\n  watchNamespaces", "operator:\n  chart: {version: 1.6.2}\n"
         "  watchNamespaces")
    text = run(accepted, "diff", "dev").output
    assert "This is a DOWNGRADE of kuberay-operator (1.7.0 -> 1.6.2). Helm won't downgrade CRDs" in text
    assert "removes the fields only 1.7.0 knows" in text
    assert "gates turned off: RayServiceIncrementalUpgrade" in text
