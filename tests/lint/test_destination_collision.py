"""Environments can't collide: the pipeline gives each environment its peers' destinations, and lint names the
environment it collides with or inherits its destination from."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from compiler.cli import main
from compiler.project.paths import Project

# not about policies: no CUE engine run (tests/policy/ and tests/lint/test_lint_policies.py are)
pytestmark = pytest.mark.usefixtures("project_without_policies")


RULE = "[environment/destination-collision]"


def lint(project: Project, *args: str):
    return CliRunner().invoke(main, ["--project", str(project.root), "lint", *args])


def test_a_three_line_environment_on_base_collides_with_dev(project: Project):
    project.environment_file("staging").write_text("extends: base\ndescription: staging\n")
    result = lint(project, "staging")
    assert result.exit_code == 1
    assert ("environment staging deploys to the same cluster (https://kubernetes.default.svc) and namespaces "
            "(ray-demo, kuberay-system) as environment dev (environments/dev.yaml)") in result.output
    assert RULE in result.output
    golden = CliRunner().invoke(main, ["--project", str(project.root), "golden", "staging"])
    assert golden.exit_code == 2 and RULE in golden.output  # an error stops the compile
    # the finding sits in the new file (not base.yaml, which set argocd for all), and only on the new one: dev is
    # in golden/, staging is not, so dev's own changes are still accepted
    assert result.output.startswith("environments/staging.yaml:1:1: error: environment staging deploys")
    dev_lint = lint(project, "dev")
    assert RULE not in dev_lint.output, dev_lint.output
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text().replace("maxReplicas: 2", "maxReplicas: 3"))
    accepted = CliRunner().invoke(main, ["--project", str(project.root), "golden", "dev"])
    assert accepted.exit_code == 0 and "golden/dev updated" in accepted.output, accepted.output


def test_extending_dev_inherits_its_destination(project: Project):
    project.environment_file("staging").write_text(
        "extends: dev\nnamespace: ray-staging\noperator: {namespace: kuberay-staging, watchNamespaces: [ray-staging]}"
        "\nnamespaces: [{name: ray-staging}]\n")
    result = lint(project, "staging")
    assert "argocd.destination is inherited from environment dev (environments/dev.yaml:9:3)" in result.output
    # dev's Namespace list merges in by name: staging would create ray-demo in dev's cluster too
    assert "and namespaces (ray-demo) as environment dev" in result.output
    project.environment_file("staging").write_text(
        project.environment_file("staging").read_text() + "argocd: {destination: {name: staging-eks}}\n")
    assert RULE not in lint(project, "staging").output
