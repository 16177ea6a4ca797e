"""Credentials are shown as *** in `krc diff` (every format) and `krc explain`; rendered files keep them."""
from __future__ import annotations

import json

import pytest
from security_support import run

from compiler import pipeline
from compiler.k8s.secrets import redact_lines
from compiler.project.paths import Project

# not about policies: no CUE engine run (tests/policy/ and tests/lint/test_lint_policies.py are)
pytestmark = pytest.mark.usefixtures("project_without_policies")


SECRET = "AKIAsuperSecretValue42"
SECRET_OBJECT = ("[{apiVersion: 'v1', kind: 'Secret', metadata: {name: 'creds', namespace: 'ray-demo'}, "
                 "stringData: {password: '%s'}, data: {token: 'c2VjcmV0LXRva2Vu'}}]")


@pytest.fixture
def with_secrets(project: Project) -> Project:
    pipeline.accept_golden(project, project.environment_names())
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text().replace("        memory: 2Gi\n", "        memory: 2Gi\n        env:\n"
                                           f"          AWS_SECRET_ACCESS_KEY: {SECRET}\n"
                                           "          LOG_LEVEL: debug\n", 1))
    (project.templates_dir / "objects" / "secret.jsonnet").write_text(SECRET_OBJECT % "hunter2-password")
    return project


@pytest.mark.parametrize("output_format", ["text", "markdown", "json"])
def test_diff_redacts_credentials_in_every_format(with_secrets: Project, output_format: str):
    result = run(with_secrets.root, ["diff", "dev", "--format", output_format])
    assert result.exit_code == 1, result.output
    assert SECRET not in result.output and "hunter2-password" not in result.output
    assert "c2VjcmV0LXRva2Vu" not in result.output
    assert "***" in result.output and "debug" in result.output  # other values are shown
    if output_format == "json":
        json.loads(result.stdout)


def test_a_changed_secret_is_still_a_change(with_secrets: Project):
    pipeline.accept_golden(with_secrets, ["dev"])
    (with_secrets.templates_dir / "objects" / "secret.jsonnet").write_text(SECRET_OBJECT % "another-password")
    result = run(with_secrets.root, ["diff", "dev"])
    assert result.exit_code == 1
    assert "stringData.password" in result.output and "another-password" not in result.output
    assert "hunter2-password" not in result.output


def test_rendered_files_keep_the_values(with_secrets: Project):
    assert run(with_secrets.root, ["render", "dev"]).exit_code == 0
    manifests = with_secrets.rendered_dir / "dev" / "manifests"
    assert SECRET in (manifests / "raycluster-ray-cpu-demo.yaml").read_text()
    assert "hunter2-password" in (manifests / "secret-creds.yaml").read_text()


@pytest.mark.parametrize("path", ["clusters.ray-cpu-demo.workerGroups.cpu.env.AWS_SECRET_ACCESS_KEY",
                                  "clusters.ray-cpu-demo.workerGroups.cpu.env",
                                  "clusters.ray-cpu-demo.workerGroups.cpu"])
def test_explain_redacts_credentials(with_secrets: Project, path: str):
    result = run(with_secrets.root, ["explain", "dev", path])
    assert result.exit_code == 0, result.output
    assert SECRET not in result.output and "***" in result.output
    assert "environments/dev.yaml:" in result.output


def test_text_lines_are_redacted_by_name():
    lines = ["+  AWS_SECRET_ACCESS_KEY: abc", "   - name: HF_TOKEN", "+    value: hf_abc", " LOG_LEVEL: debug",
             "-DB_PASSWORD=pw", " MAX_TOKENS: 4096x"]
    assert redact_lines(lines) == ("+  AWS_SECRET_ACCESS_KEY: ***", "   - name: HF_TOKEN", "+    value: ***",
                                   " LOG_LEVEL: debug", "-DB_PASSWORD=***", " MAX_TOKENS: 4096x")
