"""`krc explain` of a valid key no layer sets and krc gives no default (issue 36, item 5): it says the key is
unset, what that means, and the schema's description; a key the schema does not know is still an error."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from compiler.cli import main
from compiler.project.paths import Project

GROUP = "clusters[ray-cpu-demo].workerGroups[cpu]"


def explain(project: Project, *args: str):
    return CliRunner().invoke(main, ["--project", str(project.root), "explain", "dev", *args])


@pytest.mark.parametrize(("path", "description", "meaning"), [
    (f"{GROUP}.image", "Overrides ray.image", "unset: the group runs ray.image (rayproject/ray:"),
    (f"{GROUP}.nodeSelector", "Node labels the group's Pods must run on", "unset: no node selector"),
    ("clusters[ray-cpu-demo].raw", "Escape hatch", "unset: nothing is merged over what krc generates"),
    ("production", "Production strictness", "unset: not declared production"),
    ("jobs", "RayJobs of this environment", "unset: krc writes nothing for it"),
])
def test_a_valid_unset_key_is_explained(project: Project, path: str, description: str, meaning: str):
    result = explain(project, path)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"dev: {path} is not set"
    assert lines[1].startswith(f"  # {description}")
    assert lines[2] == "  no layer sets it and krc has no default for it"
    assert lines[3].startswith(f"  {meaning}")
    data = json.loads(explain(project, path, "--format", "json").stdout)
    assert data["origin"] == "unset" and data["value"] is None and data["setBy"] == []
    assert data["whenUnset"] == lines[3].removeprefix("  unset: ")


def test_keys_the_schema_does_not_know_are_still_errors(project: Project):
    typo = explain(project, f"{GROUP}.imagex")
    assert typo.exit_code == 2 and "has no 'imagex'" in typo.stderr and "did you mean 'image'?" in typo.stderr
    missing = explain(project, "clusters[nope].raw")
    assert missing.exit_code == 2 and "has no 'nope' in clusters" in missing.stderr
    default = explain(project, f"{GROUP}.gpu")  # a key with krc's default is explained as the default
    assert default.exit_code == 0 and default.stdout.startswith(f"dev: {GROUP}.gpu = 0\n")
