"""`krc render` and `krc golden` print the warnings they accept (issue 36, item 3): one line each on stderr, then
their count; stdout and the exit code are what they were without them."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from compiler.cli import main
from compiler.project.paths import Project


def run(project: Project, *args: str):
    return CliRunner().invoke(main, ["--project", str(project.root), *args])


@pytest.mark.usefixtures("project_without_policies")
def test_render_and_golden_print_the_warnings_they_accept(project: Project):
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text().replace("replicas: 0\n", "replicas: 5\n", 1), encoding="utf-8")
    for command, folder in (("render", "rendered/"), ("golden", "golden/")):
        result = run(project, command, "dev")
        assert result.exit_code == 0, result.output
        lines = result.stderr.splitlines()
        assert lines[0].startswith("environments/dev.yaml:") and lines[0].endswith("[raycluster/replicas-clamped]")
        assert "warning: worker group 'cpu' has replicas 5 above maxReplicas 2: the operator runs 2" in lines[0]
        assert lines[-1].startswith(f"1 warning accepted into {folder} (dev 1)")
        assert len(lines) == 2
        assert "warning" not in result.stdout
    again = run(project, "golden", "dev")  # golden/ already current: the warnings are still said
    assert again.exit_code == 0 and again.stdout == "1 environment already current in golden/\n"
    assert again.stderr.splitlines()[-1].startswith("1 warning accepted into golden/")


@pytest.mark.usefixtures("project_without_policies")
def test_no_warnings_no_stderr(project: Project):
    result = run(project, "render", "dev")
    assert result.exit_code == 0 and result.stderr == ""
