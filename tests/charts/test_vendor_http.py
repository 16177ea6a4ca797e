"""Vendoring charts from a real Helm repository served over HTTP on 127.0.0.1, and from file://."""
from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import shutil
from pathlib import Path

import pytest
from http_support import base_url, serving

from compiler.charts import repository, vendor, vendored
from compiler.charts.package import read_chart
from compiler.charts.pins import ChartPin
from compiler.diagnostics.problems import KrcError


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    requests: list[str] = []

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        type(self).requests.append(self.path)
        super().do_GET()


@pytest.fixture
def serve(tmp_path: Path):
    """Serve a folder on 127.0.0.1 (an ephemeral port); yields a function folder -> base URL."""
    with contextlib.ExitStack() as servers:
        def start(folder: Path) -> str:
            server = servers.enter_context(serving(functools.partial(_QuietHandler, directory=str(folder))))
            return f"{base_url(server)}/charts"

        yield start


@pytest.fixture
def mirror(tmp_path: Path, charts_dir: Path) -> Path:
    """A writable copy of the upstream chart repository, served as <root>/charts."""
    root = tmp_path / "www"
    shutil.copytree(charts_dir, root / "charts")
    for path in (root / "charts").iterdir():
        path.chmod(0o644)
    return root


def pin(version: str, repo: str) -> ChartPin:
    return ChartPin("kuberay-operator", version, repo)


def test_download_over_http_checks_digest_and_writes_lock(tmp_path, serve, mirror, monkeypatch):
    monkeypatch.delenv(repository.REPOSITORY_OVERRIDE_VARIABLE, raising=False)
    url = serve(mirror)
    [result] = vendor.vendor(tmp_path / "vendor", [pin("1.6.2", url)])
    assert result.downloaded
    archive = vendored.archive_path(tmp_path / "vendor", "kuberay-operator", "1.6.2")
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == result.digest
    assert vendored.read_lock(tmp_path / "vendor") == {("kuberay-operator", "1.6.2"): result.digest}
    chart = vendored.load_vendored_chart(tmp_path / "vendor", "kuberay-operator", "1.6.2")
    assert chart.version == "1.6.2"
    assert [c.kind for c in chart.crds] == ["RayCluster", "RayCronJob", "RayJob", "RayService"]


def test_a_cached_chart_needs_no_network(tmp_path, serve, mirror, monkeypatch):
    monkeypatch.delenv(repository.REPOSITORY_OVERRIDE_VARIABLE, raising=False)
    url = serve(mirror)
    vendor.vendor(tmp_path / "vendor", [pin("1.7.0", url)])
    _QuietHandler.requests.clear()
    [result] = vendor.vendor(tmp_path / "vendor", [pin("1.7.0", "http://127.0.0.1:9/unreachable")])
    assert not result.downloaded and _QuietHandler.requests == []


def test_repository_override_applies_to_every_environment(tmp_path, serve, mirror, monkeypatch):
    url = serve(mirror)
    monkeypatch.setenv(repository.REPOSITORY_OVERRIDE_VARIABLE, url)
    _QuietHandler.requests.clear()
    vendor.vendor(tmp_path / "vendor", [pin("1.5.2", "https://example.invalid/never-used")])
    assert _QuietHandler.requests == ["/charts/index.yaml", "/charts/kuberay-operator-1.5.2.tgz"]


def test_digest_mismatch_is_refused_and_nothing_is_written(tmp_path, serve, mirror, monkeypatch):
    monkeypatch.delenv(repository.REPOSITORY_OVERRIDE_VARIABLE, raising=False)
    archive = mirror / "charts" / "kuberay-operator-1.7.0.tgz"
    archive.write_bytes(archive.read_bytes() + b"tampered")
    url = serve(mirror)
    with pytest.raises(KrcError, match="digest mismatch for kuberay-operator 1.7.0"):
        vendor.vendor(tmp_path / "vendor", [pin("1.7.0", url)])
    assert not (tmp_path / "vendor" / "charts").exists()


def test_missing_version_lists_the_available_ones(tmp_path, serve, mirror, monkeypatch):
    monkeypatch.delenv(repository.REPOSITORY_OVERRIDE_VARIABLE, raising=False)
    url = serve(mirror)
    with pytest.raises(KrcError) as err:
        vendor.vendor(tmp_path / "vendor", [pin("9.9.9", url)])
    assert "version 9.9.9 is not in" in str(err.value) and "1.5.2, 1.6.2, 1.7.0" in str(err.value)


def test_http_error_is_reported_with_the_url(tmp_path, serve, monkeypatch):
    monkeypatch.delenv(repository.REPOSITORY_OVERRIDE_VARIABLE, raising=False)
    url = serve(tmp_path)  # no index.yaml there
    with pytest.raises(KrcError, match=r"GET http://127\.0\.0\.1:\d+/charts/index.yaml answered HTTP 404"):
        vendor.vendor(tmp_path / "vendor", [pin("1.7.0", url)])


def test_lock_pins_the_digest_against_a_changed_repository(tmp_path, charts_dir, mirror, monkeypatch):
    monkeypatch.delenv(repository.REPOSITORY_OVERRIDE_VARIABLE, raising=False)
    vendor.vendor(tmp_path / "vendor", [pin("1.7.0", charts_dir.as_uri())])
    # the same version republished with other content: the index and the archive agree, the lock does not
    archive = mirror / "charts" / "kuberay-operator-1.7.0.tgz"
    archive.write_bytes(archive.read_bytes() + b"republished")
    index = mirror / "charts" / "index.yaml"
    new_digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    old_digest = "c600c7aacbeeb041ed0873e1ff699a4e6f8b5a8f4e944b6543aa22e672818faa"
    index.write_text(index.read_text().replace(old_digest, new_digest))
    vendored.archive_path(tmp_path / "vendor", "kuberay-operator", "1.7.0").unlink()
    with pytest.raises(KrcError, match="a published chart changed"):
        vendor.vendor(tmp_path / "vendor", [pin("1.7.0", (mirror / "charts").as_uri())])


def test_rendering_refuses_a_missing_or_altered_archive(tmp_path, charts_dir, monkeypatch):
    monkeypatch.delenv(repository.REPOSITORY_OVERRIDE_VARIABLE, raising=False)
    with pytest.raises(KrcError, match="run 'krc vendor'"):
        vendored.load_vendored_chart(tmp_path / "vendor", "kuberay-operator", "1.7.0")
    vendor.vendor(tmp_path / "vendor", [pin("1.7.0", charts_dir.as_uri())])
    archive = vendored.archive_path(tmp_path / "vendor", "kuberay-operator", "1.7.0")
    archive.write_bytes(archive.read_bytes()[:-10])
    with pytest.raises(KrcError, match="does not match its locked digest"):
        vendored.load_vendored_chart(tmp_path / "vendor", "kuberay-operator", "1.7.0")


def test_chart_contents(charts_dir: Path):
    chart = read_chart(charts_dir / "kuberay-operator-1.5.2.tgz")
    assert chart.name == "kuberay-operator" and chart.version == "1.5.2"
    assert "RayCronJob" not in [c.kind for c in chart.crds]
    assert any(name == "deployment.yaml" for name, _ in chart.templates)
    assert {g["name"] for g in chart.values["featureGates"]} >= {"RayClusterStatusConditions"}
    rayjob = next(c for c in chart.crds if c.kind == "RayJob")
    assert rayjob.served_versions == ("v1", "v1alpha1") and rayjob.storage_version == "v1"
    assert len(rayjob.sha256()) == 64
