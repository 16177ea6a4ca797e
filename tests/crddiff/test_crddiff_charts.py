"""The real KubeRay chart pairs, through every source form: file, directory, .tgz, NAME@VERSION over HTTP, vendor."""
from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
import yaml

from compiler.charts import vendor, vendored
from compiler.charts.package import read_chart
from compiler.charts.pins import ChartPin
from compiler.crddiff import compare_crds, has_breaking, load_crd_source
from compiler.diagnostics.problems import KrcError
from compiler.documents import yamlio

CHARTS = Path(__file__).resolve().parents[2] / ".." / "shared" / "kuberay" / "charts"


def chart_path(version: str) -> Path:
    return CHARTS / f"kuberay-operator-{version}.tgz"


CLUSTER_TEMPLATES = ("headGroupSpec.template.spec.workloadRef", "workerGroupSpecs[*].template.spec.workloadRef")
# 1.7.0 drops the Pod template's workloadRef (replaced by schedulingGroup) everywhere a Pod template appears
EXPECTED_BREAKING_1_7 = {
    *(("rayclusters.ray.io", v, f"spec.{p}") for v in ("v1", "v1alpha1") for p in CLUSTER_TEMPLATES),
    *(("raycronjobs.ray.io", "v1", f"spec.jobTemplate.rayClusterSpec.{p}") for p in CLUSTER_TEMPLATES),
    ("raycronjobs.ray.io", "v1", "spec.jobTemplate.submitterPodTemplate.spec.workloadRef"),
    *(("rayjobs.ray.io", v, f"spec.rayClusterSpec.{p}") for v in ("v1", "v1alpha1") for p in CLUSTER_TEMPLATES),
    *(("rayjobs.ray.io", v, "spec.submitterPodTemplate.spec.workloadRef") for v in ("v1", "v1alpha1")),
    *(("rayservices.ray.io", v, f"spec.rayClusterConfig.{p}") for v in ("v1", "v1alpha1") for p in CLUSTER_TEMPLATES),
}


def _found(changes, check: str) -> set[tuple[str, str, str]]:
    return {(c.crd, c.version, c.path) for c in changes if c.check == check}


def _crd_texts(version: str) -> list[tuple[str, str]]:
    """(file name, text) of each CRD file the chart ships."""
    with tarfile.open(chart_path(version)) as tar:
        return sorted((Path(m.name).name, tar.extractfile(m).read().decode("utf-8"))  # type: ignore[union-attr]
                      for m in tar.getmembers() if m.isfile() and "/crds/" in m.name)


def test_1_6_to_1_7_breaking_findings_are_exactly_the_removed_workload_refs(chart_crds):
    changes = compare_crds(chart_crds("1.6.2"), chart_crds("1.7.0"))
    breaking = {(c.crd, c.version, c.path) for c in changes if c.severity == "breaking"}
    assert breaking == EXPECTED_BREAKING_1_7
    assert _found(changes, "field-removed") == EXPECTED_BREAKING_1_7
    assert has_breaking(changes)


def test_1_6_to_1_7_warnings_and_notable_additions(chart_crds):
    changes = compare_crds(chart_crds("1.6.2"), chart_crds("1.7.0"))
    assert {(c.crd, c.version, c.path, c.check) for c in changes if c.severity == "warning"} == {
        (crd, "v1alpha1", "", "version-deprecated") for crd in ("rayclusters.ray.io", "rayjobs.ray.io",
                                                               "rayservices.ray.io")}
    added = _found(changes, "field-added")
    assert ("rayclusters.ray.io", "v1", "spec.gcsFaultToleranceOptions.backend") in added
    assert ("rayclusters.ray.io", "v1", "spec.workerGroupSpecs[*].template.spec.schedulingGroup") in added
    assert ("raycronjobs.ray.io", "v1", "spec.timeZone") in added
    assert ("rayservices.ray.io", "v1", "spec.suspend") in added
    assert ("rayjobs.ray.io", "v1", "status.jobStatusCheckFailureStartTime") in added
    # gcsFaultToleranceOptions no longer requires redisAddress (rocksdb backend): loosening, info
    assert _found(changes, "field-now-optional") == {
        ("rayclusters.ray.io", "v1", "spec.gcsFaultToleranceOptions.redisAddress"),
        ("raycronjobs.ray.io", "v1", "spec.jobTemplate.rayClusterSpec.gcsFaultToleranceOptions.redisAddress"),
        ("rayjobs.ray.io", "v1", "spec.rayClusterSpec.gcsFaultToleranceOptions.redisAddress"),
        ("rayservices.ray.io", "v1", "spec.rayClusterConfig.gcsFaultToleranceOptions.redisAddress")}
    columns = [c for c in changes if c.check == "printer-columns-changed"]
    assert [(c.crd, c.severity, "timezone" in c.new) for c in columns] == [("raycronjobs.ray.io", "info", True)]


def test_1_5_to_1_6_adds_raycronjob_and_is_not_breaking(chart_crds):
    changes = compare_crds(chart_crds("1.5.2"), chart_crds("1.6.2"))
    assert not has_breaking(changes)
    crd_level = [(c.crd, c.check, c.severity) for c in changes if not c.version]
    assert crd_level == [("raycronjobs.ray.io", "crd-added", "info")]
    assert not any(c.crd == "raycronjobs.ray.io" and c.version for c in changes)  # a new CRD is one finding
    added = _found(changes, "field-added")
    assert ("rayjobs.ray.io", "v1", "spec.preRunningDeadlineSeconds") in added
    assert ("rayservices.ray.io", "v1", "spec.managedBy") in added
    # RayJob deletion conditions: `required: [jobStatus]` became CEL rules that also accept jobDeploymentStatus
    condition = "spec.deletionStrategy.deletionRules[*].condition"
    assert _found(changes, "validation-rule-added") == {("rayjobs.ray.io", "v1", condition)}
    assert _found(changes, "field-now-optional") == {("rayjobs.ray.io", "v1", condition + ".jobStatus")}


def test_reverse_upgrade_flags_the_removed_crd_and_fields(chart_crds):
    changes = compare_crds(chart_crds("1.7.0"), chart_crds("1.5.2"))
    assert ("raycronjobs.ray.io", "", "") in _found(changes, "crd-removed")
    assert ("rayclusters.ray.io", "v1", "spec.networkPolicy") in _found(changes, "field-removed")


def test_every_source_form_gives_the_same_changes(chart_crds, chart_server, tmp_path, monkeypatch):
    expected = compare_crds(chart_crds("1.6.2"), chart_crds("1.7.0"))
    forms: dict[str, tuple[str, str]] = {"tgz": (str(chart_path("1.6.2")), str(chart_path("1.7.0")))}
    for version in ("1.6.2", "1.7.0"):
        directory = tmp_path / f"dir-{version}" / "nested"
        directory.mkdir(parents=True)
        for name, text in _crd_texts(version):
            (directory / name).write_text(text, encoding="utf-8")
        (directory / "README.yaml").write_text("kind: ConfigMap\n", encoding="utf-8")  # not a CRD: ignored
        single = tmp_path / f"all-{version}.yaml"
        # re-serialised in a new layout: JSON documents (JSON is YAML; `kubectl get -o json` writes it), one line
        # each: json's C encoder writes megabytes of CRDs in 20 ms, its indenting one (pure Python) in 0.3 s
        single.write_text("---\n".join(json.dumps(crd) + "\n" for crd in chart_crds(version)),
                          encoding="utf-8")
    forms["directory"] = (str(tmp_path / "dir-1.6.2"), str(tmp_path / "dir-1.7.0"))
    forms["file"] = (str(tmp_path / "all-1.6.2.yaml"), str(tmp_path / "all-1.7.0.yaml"))
    monkeypatch.setenv("KRC_CHART_REPOSITORY", chart_server)
    forms["repository"] = ("kuberay-operator@1.6.2", "kuberay-operator@1.7.0")
    for form, (old, new) in forms.items():
        assert compare_crds(load_crd_source(old, tmp_path), load_crd_source(new, tmp_path)) == expected, form


def test_fast_loader_equals_the_safe_loader_used_by_read_chart():
    assert load_crd_source(str(chart_path("1.7.0")), None) == [c.document for c in read_chart(chart_path("1.7.0")).crds]


def test_fast_loader_falls_back_for_anchors_and_resolves_scalars_like_the_safe_loader():
    text = ("a: &x {n: 1}\nb: *x\n---\nyes: on\nnum: 0x1F\nf: 1.5e3\nnull_: ~\nempty:\nq: 'on'\n"
            "ts: 2024-01-02\nlit: |\n  two\n  lines\n")
    assert yamlio.load_all(text, "t.yaml") == list(yaml.safe_load_all(text))
    with pytest.raises(KrcError, match="t.yaml:2"):
        yamlio.load_all("a: 1\n b: [\n", "t.yaml")


def test_repository_reference_reports_unknown_versions(chart_server, monkeypatch):
    monkeypatch.setenv("KRC_CHART_REPOSITORY", chart_server)
    with pytest.raises(KrcError, match=r"version 9\.9\.9 is not in .*1\.5\.2, 1\.6\.2, 1\.7\.0"):
        load_crd_source("kuberay-operator@9.9.9", None)


def test_locked_vendored_chart_is_used_offline_and_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("KRC_CHART_REPOSITORY", CHARTS.resolve().as_uri())
    vendor.vendor(tmp_path / "vendor", [ChartPin("kuberay-operator", "1.6.2", "unused")])
    monkeypatch.setenv("KRC_CHART_REPOSITORY", "http://127.0.0.1:9/")  # nothing listens: must not be needed
    crds = load_crd_source("kuberay-operator@1.6.2", tmp_path)
    assert [c["metadata"]["name"] for c in crds] == ["rayclusters.ray.io", "raycronjobs.ray.io",
                                                     "rayjobs.ray.io", "rayservices.ray.io"]
    archive = vendored.archive_path(tmp_path / "vendor", "kuberay-operator", "1.6.2")
    archive.write_bytes(archive.read_bytes()[:-10] + b"0123456789")
    with pytest.raises(KrcError, match="does not match its locked digest"):
        load_crd_source("kuberay-operator@1.6.2", tmp_path)


@pytest.mark.parametrize("content, message", [
    (b"not a gzip", "not a readable chart archive"),
    (None, "does not hold exactly one chart directory"),
])
def test_bad_archives_are_input_errors(tmp_path, content, message):
    if content is None:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            for root in ("a", "b"):
                info = tarfile.TarInfo(f"{root}/Chart.yaml")
                info.size = 0
                tar.addfile(info, io.BytesIO(b""))
        content = buffer.getvalue()
    archive = tmp_path / "chart.tgz"
    archive.write_bytes(content)
    with pytest.raises(KrcError, match=message):
        load_crd_source(str(archive), None)
