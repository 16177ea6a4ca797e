"""merged_settings, the light load every command uses to find where each environment deploys, reads a valid
environment exactly as load_environment does, and what it lets through still fails the full load."""
from __future__ import annotations

import pytest

from compiler.diagnostics.problems import KrcError
from compiler.environment.model import load_environment, merged_settings
from compiler.project.paths import Project


def test_valid_environments_read_the_same_as_the_full_load(project: Project):
    (project.environments_dir / "dev-edited.yaml").write_text(
        "extends: dev\nnamespace: ray-edited\nargocd:\n  destination:\n    name: edge-1\n"
        "clusters:\n  - name: ray-cpu-demo\n    workerGroups:\n      - name: cpu\n        maxReplicas: 3\n")
    names = project.environment_names()
    assert "dev-edited" in names and len(names) >= 3
    for name in names:
        env = load_environment(project, name)
        assert merged_settings(project, name) == (env.data, env.files)


def test_what_the_light_load_lets_through_the_full_load_refuses(project: Project):
    (project.environments_dir / "typo.yaml").write_text("extends: dev\nnamespce: ray-typo\n")
    settings, _ = merged_settings(project, "typo")
    assert settings["namespce"] == "ray-typo"
    with pytest.raises(KrcError, match="namespce"):
        load_environment(project, "typo")


def test_a_cycle_is_refused(project: Project):
    (project.environments_dir / "a.yaml").write_text("extends: b\n")
    (project.environments_dir / "b.yaml").write_text("extends: a\n")
    with pytest.raises(KrcError, match="cycle"):
        merged_settings(project, "a")
