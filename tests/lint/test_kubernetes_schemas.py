"""The operator chart's objects, Namespaces and ServiceAccounts against the strict Kubernetes schemas of the
environment's version; findings point at the environment line of the Helm value that caused them."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from compiler import pipeline
from compiler.cli import main
from compiler.project.paths import Project
from compiler.validation import kubernetes_schemas

# not about policies: no CUE engine run (tests/policy/ and tests/lint/test_lint_policies.py are)
pytestmark = pytest.mark.usefixtures("project_without_policies")


BAD_VALUES = """\
# yaml-language-server: $schema=../compiler/schemas/environment.schema.json
extends: dev
operator:
  values:
    resources:
      limit: {cpu: 1}
    securityContext:
      runAsNonroot: true
    nodeSelector: [gpu]
    batchScheduler:
      nmae: volcano
"""


def test_invalid_helm_values_are_errors_at_their_environment_line(project: Project):
    (project.environments_dir / "bad.yaml").write_text(BAD_VALUES)
    found = {(p.location.line if p.location else 0, p.rule): p.message
             for p in pipeline.lint_environments(project, ["bad"])
             # bad.yaml shares dev's destination: that collision is another test's subject
             if p.severity == "error" and p.rule != "environment/destination-collision"}
    assert "set by operator.values.resources.limit" in found[(6, "schema/unknown-field")]
    assert "unknown field 'limit'" in found[(6, "schema/unknown-field")]
    assert "set by operator.values.securityContext.runAsNonroot" in found[(8, "schema/unknown-field")]
    assert "is not of type 'object'" in found[(9, "schema/type")]
    assert "did you mean 'batchScheduler.name'" in found[(11, "chart/unread-values")]
    assert len(found) == 4

    result = CliRunner().invoke(main, ["--project", str(project.root), "render", "bad"])
    assert result.exit_code == 2 and "environments/bad.yaml:6:7: error: Deployment kuberay-operator" in result.output
    assert not project.rendered_dir.exists()


def test_valid_environments_pass_and_every_shipped_version_is_known(project: Project):
    assert not [p for p in pipeline.lint_environments(project, []) if p.rule.startswith("schema/")]
    assert kubernetes_schemas.supported_versions()[0] == "1.25" and "1.37" in kubernetes_schemas.supported_versions()


def test_namespace_and_service_account_fields():
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}, "spec": {"finalizer": []}}
    [error] = kubernetes_schemas.validate("1.33", namespace)
    assert error.path == ("spec", "finalizer") and error.check == "schema/unknown-field"
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "s3"},
               "automountServiceAccountToken": "yes"}
    [error] = kubernetes_schemas.validate("1.33", account)
    assert error.path == ("automountServiceAccountToken",) and error.check == "schema/type"
    assert kubernetes_schemas.validate("1.33", {**account, "automountServiceAccountToken": False}) == []


def test_an_unsupported_kubernetes_version_is_bad_input(project: Project):
    env = project.environment_file("dev")
    env.write_text(env.read_text() + "kubernetesVersion: '1.19'\n")
    result = CliRunner().invoke(main, ["--project", str(project.root), "lint", "dev"])
    assert result.exit_code == 2 and "no Kubernetes schemas for version 1.19" in result.output
