"""The thin CLI: exit codes, one-line errors, nothing written on bad input."""
from __future__ import annotations

import gc
import sys
from importlib.metadata import entry_points

import pytest
from click.testing import CliRunner

from compiler import cli
from compiler.cli import main
from compiler.output import folders
from compiler.project.paths import Project


def run(project: Project, *args: str):
    return CliRunner().invoke(main, ["--project", str(project.root), *args])


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_render_check_and_golden_round_trip(project: Project):
    result = run(project, "render")
    assert result.exit_code == 0, result.output
    assert "4 CRDs of kuberay-operator 1.7.0" in result.output and "rendered prod-eks-gpu:" in result.output
    assert run(project, "check").exit_code == 0
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text().replace("maxReplicas: 2", "maxReplicas: 3"))
    result = run(project, "check")
    assert result.exit_code == 1
    assert "changed: golden/dev/manifests/raycluster-ray-cpu-demo.yaml" in result.output
    prod_files = sorted((project.golden_dir / "prod-eks-gpu").rglob("*"))
    inodes = [path.stat().st_ino for path in prod_files]
    result = run(project, "golden")
    assert result.exit_code == 0, result.output
    # only what changed is written; a golden/<env>/ that holds the render already is left in place
    assert result.output.splitlines() == ["golden/dev updated", "1 environment already current in golden/"]
    assert [path.stat().st_ino for path in sorted((project.golden_dir / "prod-eks-gpu").rglob("*"))] == inodes
    assert run(project, "check").exit_code == 0
    # compiled afresh, not answered from the cache's summaries: the same
    assert run(project, "golden", "--no-cache").output.splitlines() == ["2 environments already current in golden/"]


def test_bad_input_exits_2_with_file_line_and_writes_nothing(project: Project):
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text().replace("maxReplicas: 2", "maxReplicas: two"))
    result = run(project, "render")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert lines[0] == ('environments/dev.yaml:28:9: error: clusters[ray-cpu-demo].workerGroups[cpu].maxReplicas: '
                        '"two" should be a whole number')
    assert lines[1:] == ["   |", "28 |         maxReplicas: two", "   |         ^^^^^^^^^^^^^^^^",
                         "   = help: maxReplicas takes a whole number, e.g. maxReplicas: 2"]
    assert folders.read_tree(project.rendered_dir) == {}


def test_unknown_environment_lists_the_known_ones(project: Project):
    result = run(project, "render", "staging")
    assert result.exit_code == 2
    assert result.output == "krc: error: unknown environment 'staging'\n  help: choose one of: dev, prod-eks-gpu\n"


def test_explain(project: Project):
    result = run(project, "explain", "dev", "clusters.ray-cpu-demo.workerGroups.cpu.maxReplicas")
    assert result.exit_code == 0
    assert result.output.startswith("dev: clusters[ray-cpu-demo].workerGroups[cpu].maxReplicas = 2\n")
    assert "\n  set at environments/dev.yaml:28:9\n" in result.output
    result = run(project, "explain", "prod-eks-gpu", "operator.chart.version")
    assert "  set at environments/base.yaml:" in result.output
    assert "  overridden at environments/prod-eks-gpu.yaml:" in result.output


def test_vendor_reports_cached_charts(project: Project):
    result = run(project, "vendor")
    assert result.exit_code == 0
    assert "kuberay-operator 1.6.2 sha256:8edc14b9" in result.output and "(cached)" in result.output


def test_the_executable_keeps_the_commands_exit_code_and_leaves_its_heap_to_the_system(
        monkeypatch: pytest.MonkeyPatch):
    """`krc` is cli.run: the command's own exit, after freezing the heap so shutdown does not collect it."""
    [script] = [e for e in entry_points(group="console_scripts") if e.name == "krc"]
    assert script.value == "compiler.cli:run"
    frozen: list[bool] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    for argv, code in ((["krc", "no-such-command"], 2), (["krc", "--help"], 0)):
        monkeypatch.setattr(sys, "argv", argv)
        with pytest.raises(SystemExit) as exited:
            cli.run()
        assert exited.value.code == code
    assert frozen == [True, True]
