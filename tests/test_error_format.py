"""Snapshot tests of the error format on the mistakes people make: `file:line:col: error: message`, the source line
with a caret under the span, and a `help:` line with the fix in the environment file's terms.

Each case edits the fixture project's environments (or asks for something that is not there) and compares krc's
whole stderr with tests/error_snapshots/<case>.txt. After a deliberate wording change, regenerate them with
`KRC_UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/test_error_format.py` and review the diff.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from compiler.cli import main
from compiler.diagnostics.problems import Location, Problem
from compiler.diagnostics.report_format import Style, choose_style, format_problem
from compiler.project.paths import Project

SNAPSHOTS = Path(__file__).parent / "error_snapshots"


@dataclass(frozen=True)
class Mistake:
    name: str
    edit: tuple[str, str] = ("", "")  # (old, new) text in the file
    file: str = "environments/dev.yaml"
    args: tuple[str, ...] = ("render", "dev")


MISTAKES = [
    Mistake("yaml-no-space-after-colon", ("        cpu: 1\n        memory: 2Gi", "        cpu:1\n        memory: 2Gi")),
    Mistake("yaml-indentation", ("        replicas: 0", "       replicas: 0")),
    Mistake("yaml-unclosed-list", ("  watchNamespaces: [ray-demo]", "  watchNamespaces: [ray-demo")),
    Mistake("yaml-unclosed-quote", ("description: CPU-only development cluster",
                                    "description: 'CPU-only development cluster")),
    Mistake("yaml-tab-indentation", ("      serviceType: ClusterIP", "\tserviceType: ClusterIP")),
    Mistake("yaml-duplicate-key", ("cpuOnly: true\n", "cpuOnly: true\ncpuOnly: false\n")),
    Mistake("memory-in-gb", ("        memory: 2Gi", "        memory: 32GB")),
    Mistake("cpu-in-cores", ("        cpu: 1\n        memory: 2Gi", "        cpu: 4 cores\n        memory: 2Gi")),
    Mistake("memory-with-space", ("        memory: 2Gi", "        memory: 32 Gi")),
    Mistake("quoted-number", ("maxReplicas: 2", "maxReplicas: '2'")),
    Mistake("number-as-word", ("maxReplicas: 2", "maxReplicas: two")),
    Mistake("unknown-key-typo", ("maxReplicas: 2", "maxReplicas: 2\n        maxReplica: 3")),
    Mistake("unknown-top-level-key", ("cpuOnly: true\n", "cpuOnly: true\ndescripton: typo\n")),
    Mistake("enum-typo", ("      serviceType: ClusterIP", "      serviceType: ClusterIPP")),
    Mistake("invalid-kubernetes-name", ("  - name: ray-cpu-demo", "  - name: Ray_demo")),
    Mistake("negative-replicas", ("        minReplicas: 0", "        minReplicas: -1")),
    Mistake("list-item-without-name", ("  - name: ray-demo", "  - nam: ray-demo")),
    Mistake("extends-typo", ("extends: base", "extends: bse")),
    Mistake("extends-cycle", ("extends: base", "extends: dev")),
    Mistake("bool-as-word", ("cpuOnly: true", "cpuOnly: maybe")),
    Mistake("impossible-date", ("description: CPU-only development cluster", "description: 2024-13-45")),
    Mistake("version-read-as-number", ("  version: '2.58.0'", "  version: 2.58"), file="environments/base.yaml"),
    Mistake("map-where-list-expected", ("  - name: ray-demo", "  name: ray-demo"), args=("render", "dev")),
    Mistake("typo-inside-raw", ("        memory: 2Gi\n", "        memory: 2Gi\n        raw:\n          template:\n"
                                "            spec:\n              containers:\n                - name: ray-worker\n"
                                "                  imagePullPolicyy: Always\n")),
    Mistake("min-above-max-replicas", ("        minReplicas: 0", "        minReplicas: 3")),
    Mistake("unknown-environment", args=("render", "dve")),
    Mistake("layer-is-not-an-environment", args=("render", "base")),
    Mistake("explain-path-typo", args=("explain", "dev", "clusters[ray-cpu-demo].workerGroups[cpu].maxReplica")),
    Mistake("rule-id-typo", args=("rules", "raycluster/worker-replica")),
    Mistake("policy-name-typo", args=("rules", "policy/dev-no-gp")),
    Mistake("init-extends-typo", args=("init", "staging", "--extends", "bsae")),
]


def _krc(project: Project, *args: str, env: dict[str, str] | None = None):
    return CliRunner(env=env).invoke(main, ["--project", str(project.root), *args])


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_error_snapshot(project: Project, mistake: Mistake):
    old, new = mistake.edit
    if old:
        path = project.root / mistake.file
        text = path.read_text()
        assert old in text, f"the fixture no longer has {old!r}"
        path.write_text(text.replace(old, new, 1))
    result = _krc(project, *mistake.args, env={"NO_COLOR": None, "FORCE_COLOR": None})
    assert result.exit_code == 2, result.output
    assert "\x1b[" not in result.stderr  # not a terminal: plain text
    snapshot = SNAPSHOTS / f"{mistake.name}.txt"
    if os.environ.get("KRC_UPDATE_SNAPSHOTS"):
        snapshot.parent.mkdir(exist_ok=True)
        snapshot.write_text(result.stderr)
    assert result.stderr == snapshot.read_text(), result.stderr
    first = result.stderr.splitlines()[0]
    assert ": error: " in first
    assert "help:" in result.stderr  # every mistake says what to do


def test_at_least_twenty_mistakes_have_snapshots():
    assert len(MISTAKES) >= 20
    assert {p.stem for p in SNAPSHOTS.glob("*.txt")} == {m.name for m in MISTAKES}


def test_the_snippet_underlines_the_entry_and_the_help_follows():
    problem = Problem("memory: \"32GB\" is not a Kubernetes quantity", Location("env.yaml", 2, 9), help="write 32Gi")
    text = format_problem(problem, Style(), lambda name: ["workerGroups:", "        memory: 32GB  # big"])
    assert text.splitlines() == [
        'env.yaml:2:9: error: memory: "32GB" is not a Kubernetes quantity',
        "  |",
        "2 |         memory: 32GB  # big",
        "  |         ^^^^^^^^^^^^",
        "  = help: write 32Gi"]


def test_colour_follows_the_terminal_no_color_force_color_and_the_option():
    assert not choose_style("auto", False, {}).color
    assert choose_style("auto", True, {"TERM": "xterm"}).color
    assert not choose_style("auto", True, {"NO_COLOR": "1"}).color
    assert choose_style("auto", False, {"FORCE_COLOR": "1"}).color
    assert choose_style("always", False, {"NO_COLOR": "1"}).color
    assert not choose_style("never", True, {"FORCE_COLOR": "1"}).color


def test_colour_on_request_and_never_otherwise(project: Project):
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text().replace("maxReplicas: 2", "maxReplicas: two"))
    coloured = _krc(project, "--color", "always", "render", "dev")
    assert "\x1b[1;31merror:\x1b[0m" in coloured.stderr and "\x1b[1;32mhelp:\x1b[0m" in coloured.stderr
    forced = _krc(project, "render", "dev", env={"FORCE_COLOR": "1", "NO_COLOR": None})
    assert "\x1b[" in forced.stderr
    plain = _krc(project, "render", "dev", env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\x1b[" not in plain.stderr


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_rule_findings_on_an_environment_use_its_keys(project: Project):
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text() + "jobs:\n  - name: train\n    entrypoint: python train.py\n")
    result = _krc(project, "lint", "dev")
    assert result.exit_code == 1
    assert "neither cluster nor clusterSelector is set; add cluster to create a cluster" in result.stdout
    assert "rayClusterSpec" not in result.stdout
