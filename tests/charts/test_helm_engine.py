"""Helm through the engine: byte for byte what the real `helm template` 4.2.1 prints for every environment of the
shipped project and of the fixture project, submitted ahead for a batch, cached, and refused for an archive that
does not match its lock."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import run_shared
from click.testing import CliRunner
from project_support import REPO_ROOT, copy_project

from compiler import pipeline
from compiler.charts import helm_template, vendored
from compiler.cli import main
from compiler.diagnostics.problems import KrcError, Location
from compiler.native import client
from compiler.project.paths import Project, find_project

ENGINE_DIR = REPO_ROOT / "engine"
SEQUENTIAL = pipeline.RunOptions(cache=False, workers=1)


def run(project: Project, *args: str) -> Any:
    return CliRunner().invoke(main, ["--project", str(project.root), *args])


@pytest.fixture(scope="module")
def helm_cli() -> Path:
    """The real helm command, built from the engine's own module (go.mod pins it), stamped v4.2.1 as released."""

    def build(folder: Path) -> None:
        subprocess.run(["go", "build", "-o", str(folder / "helm"), "-ldflags",
                        f"-X helm.sh/helm/v4/internal/version.version={helm_template.HELM_VERSION}",
                        "helm.sh/helm/v4/cmd/helm"], cwd=ENGINE_DIR, check=True, capture_output=True)

    return run_shared.once("helm-cli", build) / "helm"


def _recorded_requests(monkeypatch: pytest.MonkeyPatch) -> list[helm_template.TemplateRequest]:
    seen: list[helm_template.TemplateRequest] = []
    real = helm_template.template_chart

    def record(request: helm_template.TemplateRequest, where: Location) -> list[dict[str, Any]]:
        seen.append(request)
        return real(request, where)

    monkeypatch.setattr(helm_template, "template_chart", record)
    from compiler.render import templates as render
    monkeypatch.setattr(render, "template_chart", record)
    return seen


def _helm_template(helm: Path, request: helm_template.TemplateRequest, scratch: Path) -> str:
    values = scratch / "values.json"
    values.write_text(json.dumps(request.values), encoding="utf-8")
    env = {"HOME": str(scratch), "HELM_CACHE_HOME": str(scratch), "HELM_CONFIG_HOME": str(scratch),
           "HELM_DATA_HOME": str(scratch), "KUBECONFIG": str(scratch / "none"), "PATH": os.environ["PATH"]}
    done = subprocess.run([str(helm), "template", request.release, str(request.archive), "--namespace",
                           request.namespace, "--kube-version", request.kube_version, "--skip-crds", "--values",
                           str(values)], capture_output=True, text=True, env=env, check=True)
    return done.stdout


@pytest.mark.parametrize("which", ["shipped", "fixture"])
def test_every_environment_renders_as_the_helm_cli_does(which: str, helm_cli: Path, tmp_path: Path,
                                                        vendor_cache: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))
    project = find_project(REPO_ROOT) if which == "shipped" else copy_project(tmp_path / "p", vendor_cache)
    if which == "shipped":  # the shipped project renders into a scratch copy, its golden/ untouched
        scratch = tmp_path / "shipped"
        for part in ("environments", "templates", "vendor"):
            shutil.copytree(REPO_ROOT / part, scratch / part, ignore=shutil.ignore_patterns("charts"))
        shutil.copytree(vendor_cache / "charts", scratch / "vendor" / "charts")
        project = find_project(scratch)
    requests = _recorded_requests(monkeypatch)
    pipeline.render_to_disk(project, project.environment_names(), SEQUENTIAL)
    assert len(requests) == len(project.environment_names()) >= 2
    for request in requests:
        engine = helm_template.CACHE.read_json(request.cache_key())["manifest"]
        assert engine == _helm_template(helm_cli, request, tmp_path), request.release
        assert "kind: Deployment" in engine


def _request(project: Project, version: str = "1.7.0", **values: Any) -> helm_template.TemplateRequest:
    digest = vendored.read_lock(project.vendor_dir)[("kuberay-operator", version)]
    return helm_template.TemplateRequest(vendored.archive_path(project.vendor_dir, "kuberay-operator", version),
                                         digest, "kuberay-operator", "ray-ops", "1.33", dict(values))


def test_a_batch_is_submitted_ahead_and_answered_by_one_engine(project: Project, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))
    submitted: list[str] = []
    real = client.Pending.__init__

    def spy(self: client.Pending, op: str, args: dict[str, Any], what: str, timeout: float) -> None:
        submitted.append(op)
        real(self, op, args, what, timeout)

    monkeypatch.setattr(client.Pending, "__init__", spy)
    requests = [_request(project, "1.6.2", replicas=n) for n in (1, 2, 3)]
    helm_template.start_ahead(requests)
    assert submitted == ["render"] * 3  # all three before the first is needed
    texts = [helm_template.template_chart(r, Location("x")) for r in requests]
    assert submitted == ["render"] * 3  # taken, not asked again
    assert [objects[-1]["spec"]["replicas"] for objects in texts if objects[-1]["kind"] == "Deployment"] == [1, 2, 3]
    engine = client._engine()
    # the engine forgot the archive (a new process): krc sends its bytes again
    client.close_engine()
    assert not engine.alive()
    again = helm_template.template_chart(_request(project, "1.6.2", replicas=7), Location("x"))
    assert any(o.get("spec", {}).get("replicas") == 7 for o in again)


def test_the_cache_answers_a_warm_render_without_an_engine(project: Project, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))
    assert run(project, "render").exit_code == 0
    cached = sorted(p for p in (tmp_path / "cache" / helm_template.CACHE.name).rglob("*") if p.is_file())
    assert len(cached) == 2  # one per environment: chart, values and namespace differ
    first = {p: p.read_bytes() for p in sorted(project.rendered_dir.rglob("*")) if p.is_file()}
    client.close_engine()
    monkeypatch.setenv("KRC_ENGINE", str(tmp_path / "no-engine"))
    assert run(project, "render").exit_code == 0
    assert {p: p.read_bytes() for p in sorted(project.rendered_dir.rglob("*")) if p.is_file()} == first
    edit = project.environment_file("dev")
    edit.write_text(edit.read_text().replace("watchNamespaces: [ray-demo]", "watchNamespaces: [ray-demo, other]"))
    result = run(project, "render", "dev")
    assert result.exit_code == 2 and "KRC_ENGINE=" in result.output and "not an executable file" in result.output


def test_an_archive_that_does_not_match_its_lock_is_refused(project: Project, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))
    good = _request(project, "1.7.0")
    other = vendored.archive_path(project.vendor_dir, "kuberay-operator", "1.6.2")
    forged = helm_template.TemplateRequest(other, good.archive_sha256, good.release, good.namespace,
                                           good.kube_version, good.values)
    client.close_engine()  # an engine that holds the archive this digest names would render that one instead
    with pytest.raises(KrcError) as raised:
        helm_template.template_chart(forged, Location("environments/dev.yaml", 3))
    text = str(raised.value)
    assert "does not match its digest" in text and "krc vendor" in text and "environments/dev.yaml:3" in text


def test_a_chart_error_names_the_values_to_fix(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))
    broken = _request(project, "1.7.0", image="not a map")
    with pytest.raises(KrcError) as raised:
        helm_template.template_chart(broken, Location("environments/dev.yaml", 9))
    text = str(raised.value)
    assert "helm template of kuberay-operator-1.7.0.tgz failed" in text and "fix operator.values" in text
    assert "deployment.yaml:68" in text and "environments/dev.yaml:9" in text
    # the engine goes on serving: the next render works
    assert helm_template.template_chart(_request(project, "1.7.0"), Location("x"))
