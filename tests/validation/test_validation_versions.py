"""API versions, kinds the set does not define, CRD-version drift, Argo CD CRDs and loading CRDs from disk."""
from __future__ import annotations

import copy

import pytest
from validation_support import ARGOCD_CRDS, CHARTS, SAMPLES, argocd_schemas, cluster, job, kuberay_schemas

from compiler.charts.package import read_chart, read_chart_bytes
from compiler.diagnostics.fieldpath import parse as parse_path
from compiler.diagnostics.fieldpath import render
from compiler.diagnostics.problems import KrcError
from compiler.validation import SchemaSet, load_crds_from_path

APPLICATION = {
    "apiVersion": "argoproj.io/v1alpha1",
    "kind": "Application",
    "metadata": {"name": "ray-workloads", "namespace": "argocd"},
    "spec": {
        "project": "default",
        "source": {"repoURL": "https://example.com/ml/platform.git", "targetRevision": "main", "path": "ray",
                   "helm": {"valuesObject": {"anything": {"nested": [1, 2]}}}},
        "destination": {"server": "https://kubernetes.default.svc", "namespace": "ml"},
        "syncPolicy": {"automated": {"prune": True, "selfHeal": True},
                       "syncOptions": ["ServerSideApply=true", "CreateNamespace=true"]},
        "ignoreDifferences": [{"group": "ray.io", "kind": "RayCluster",
                               "jsonPointers": ["/spec/workerGroupSpecs/0/replicas"]}],
    },
}


def rules_and_paths(result) -> list[tuple[str, str, str]]:
    return [(p.rule, p.path, p.severity) for p in result.problems]


def test_v1alpha1_is_served_but_deprecated_in_170():
    document = cluster()
    document["apiVersion"] = "ray.io/v1alpha1"
    result = kuberay_schemas("1.7.0").validate(document)
    assert rules_and_paths(result) == [("schema/deprecated-version", "apiVersion", "warning")]
    assert result.problems[0].message.startswith("ray.io/v1alpha1 RayCluster is deprecated; use ray.io/v1 RayCluster")
    assert result.ok
    assert kuberay_schemas("1.6.2").validate(document).problems == ()


def test_field_new_in_170_is_unknown_to_162():
    document = cluster()
    document["spec"]["networkPolicy"] = {"mode": "DenyAll"}
    assert kuberay_schemas("1.7.0").validate(document).problems == ()
    (problem,) = kuberay_schemas("1.6.2").validate(document).problems
    assert (problem.rule, problem.path, problem.severity) == ("schema/unknown-field", "spec.networkPolicy", "error")
    assert problem.message == 'unknown field "spec.networkPolicy"'
    assert "would prune it silently" in problem.help


def test_rayjob_field_new_in_170_nested_in_the_cluster_spec():
    document = job()
    document["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["priority"] = 10
    (problem,) = kuberay_schemas("1.6.2").validate(document).problems
    assert problem.path == "spec.rayClusterSpec.workerGroupSpecs[0].priority"


def test_kind_missing_from_an_older_chart_is_an_error():
    cron = {"apiVersion": "ray.io/v1", "kind": "RayCronJob", "metadata": {"name": "nightly"},
            "spec": {"schedule": "0 3 * * *", "jobTemplate": job()["spec"]}}
    assert kuberay_schemas("1.7.0").validate(cron).problems == ()
    schemas_152 = kuberay_schemas("1.5.2")
    assert schemas_152.knows(cron)
    assert rules_and_paths(schemas_152.validate(cron)) == [("schema/unknown-kind", "kind", "error")]


def test_unserved_or_undefined_version_is_an_error():
    document = cluster()
    document["apiVersion"] = "ray.io/v2"
    (problem,) = kuberay_schemas("1.7.0").validate(document).problems
    assert (problem.rule, problem.path) == ("schema/unknown-kind", "apiVersion")
    assert problem.message == ('apiVersion: Unsupported value: "ray.io/v2": supported values: "ray.io/v1", '
                               '"ray.io/v1alpha1"')
    assert problem.help == "did you mean 'ray.io/v1'?"


def test_other_groups_are_not_judged():
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}, "spec": {"bogus": 1}}
    schemas = kuberay_schemas("1.7.0")
    assert not schemas.knows(deployment) and not schemas.knows("text") and not schemas.knows({"kind": "X"})
    result = schemas.validate(deployment)
    assert result.problems == () and result.defaulted == deployment


def test_argocd_application_validates_against_the_argocd_crds():
    schemas = argocd_schemas()
    assert ("argoproj.io", "Application") in schemas.kinds
    result = schemas.validate(copy.deepcopy(APPLICATION))
    assert result.problems == ()
    assert result.defaulted["spec"]["source"]["helm"]["valuesObject"] == {"anything": {"nested": [1, 2]}}


def test_argocd_application_typo_and_missing_destination():
    document = copy.deepcopy(APPLICATION)
    document["spec"]["syncPolcy"] = document["spec"].pop("syncPolicy")
    del document["spec"]["destination"]
    problems = argocd_schemas().validate(document).problems
    assert [(p.rule, p.path) for p in problems] == [("schema/required", "spec.destination"),
                                                    ("schema/unknown-field", "spec.syncPolcy")]
    assert problems[1].help.endswith("did you mean 'syncPolicy'?")


def test_one_schema_set_can_hold_argocd_and_kuberay_crds():
    crds = list(read_chart(CHARTS / "kuberay-operator-1.7.0.tgz").crds) + load_crds_from_path(ARGOCD_CRDS)
    schemas = SchemaSet.from_crds(crds)
    assert schemas.groups == frozenset({"ray.io", "argoproj.io"})
    assert schemas.validate(cluster()).ok and schemas.validate(copy.deepcopy(APPLICATION)).ok


def test_crds_are_sent_once_then_named_by_digest(monkeypatch):
    from compiler.charts import crds_ahead
    from compiler.native import client

    crd = read_chart(CHARTS / "kuberay-operator-1.7.0.tgz").crds[0]
    sent: list[dict] = []
    real = client.Pending.__init__

    def recording(self, op, args, what, timeout):
        sent.append(args)
        real(self, op, args, what, timeout)

    monkeypatch.setattr(client.Pending, "__init__", recording)
    monkeypatch.setattr(client, "_KNOWN", {})
    monkeypatch.setattr(crds_ahead, "_AHEAD", {})  # nothing sent before, as in a new process
    schemas = SchemaSet.from_crds([crd])
    assert [r.ok for r in schemas.validate_many([cluster(), cluster(), cluster()])] == [True] * 3
    assert schemas.validate(cluster()).ok
    assert [("crd" in a, "crdDigest" in a, len(a["objects"])) for a in sent] == [(True, False, 3), (False, True, 1)]


def test_two_different_crds_for_one_kind_are_refused():
    crds_162 = read_chart(CHARTS / "kuberay-operator-1.6.2.tgz").crds
    crds_170 = read_chart(CHARTS / "kuberay-operator-1.7.0.tgz").crds
    with pytest.raises(KrcError, match="two different CRDs define ray.io RayCluster"):
        SchemaSet.from_crds([crds_162[0], crds_170[0]])


def test_load_crds_from_a_file_a_directory_and_nothing(tmp_path):
    assert [c["spec"]["names"]["kind"] for c in load_crds_from_path(ARGOCD_CRDS)] == [
        "Application", "ApplicationSet", "AppProject"]
    (single,) = load_crds_from_path(ARGOCD_CRDS / "appproject-crd.yaml")
    assert single["metadata"]["name"] == "appprojects.argoproj.io"
    (tmp_path / "notes.yaml").write_text("kind: ConfigMap\napiVersion: v1\n")
    with pytest.raises(KrcError, match="no CustomResourceDefinition found"):
        load_crds_from_path(tmp_path)
    with pytest.raises(KrcError, match="does not exist"):
        load_crds_from_path(tmp_path / "missing")


@pytest.mark.parametrize("text", [
    "spec.workerGroupSpecs[0].template.spec.containers[1].image",
    'metadata.labels["app.kubernetes.io/name"]',
    "spec.headGroupSpec.rayStartParams.num-cpus",
    "apiVersion",
])
def test_paths_round_trip(text):
    assert render(parse_path(text)) == text


def test_upstream_170_sample_loses_a_field_on_162_crds():
    path = SAMPLES / "ray-cluster.network-policy-deny-all.yaml"
    results = kuberay_schemas("1.6.2").validate_text(path.read_text(encoding="utf-8"), "deny-all.yaml")
    errors = [(p.rule, p.path) for r in results for p in r.problems if p.severity == "error"]
    assert errors == [("schema/unknown-field", "spec.networkPolicy")]
    assert all(r.ok for r in kuberay_schemas("1.7.0").validate_text(path.read_text(encoding="utf-8"), "x.yaml"))


def test_a_chart_crd_is_decoded_in_python_only_for_an_error_to_explain():
    # a fresh read of the chart (not the one read_chart keeps), so no other test has decoded its documents yet
    path = CHARTS / "kuberay-operator-1.6.2.tgz"
    crds = {crd.kind: crd for crd in read_chart_bytes(path.read_bytes(), str(path)).crds}
    schemas = SchemaSet.from_crds(crds.values())
    assert schemas.validate(cluster()).problems == ()
    assert "document" not in vars(crds["RayCluster"])  # the engine judged the canonical text it was sent
    document = cluster()
    document["spec"]["headGroupSpec"]["serviceTyp"] = "ClusterIP"
    (problem,) = schemas.validate(document).problems
    assert problem.rule == "schema/unknown-field"
    assert "serviceType" in problem.help  # the typo's neighbours come from the schema, decoded now
    assert "document" in vars(crds["RayCluster"])
