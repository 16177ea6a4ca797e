"""What krc prints, at its edges (issue 35): control characters escaped once for every message and report, a closed
pipe ending quietly, and the Python floor refused in one line."""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from compiler.cli import PYTHON_FLOOR, main, python_too_old, run
from compiler.cli.edge import BROKEN_PIPE_EXIT
from compiler.diagnostics.problems import Location, Problem, safe_text
from compiler.diagnostics.report_format import format_problem

KRC = Path(sys.executable).with_name("krc")
REPO_ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\u202e\u2066x\ny\r\x7f\x85\ud800\udcff"


def test_safe_text_escapes_what_a_terminal_acts_on_and_nothing_else():
    assert safe_text(HOSTILE) == "\\x1b]0;pwned\\x07\\x1b[2J\\u202e\\u2066x\\ny\\r\\x7f\\x85\\ud800\\xff"
    assert safe_text(safe_text(HOSTILE)) == safe_text(HOSTILE)
    assert safe_text("déjà vu: 10Gi, ray-集群 ✓") == "déjà vu: 10Gi, ray-集群 ✓"
    assert safe_text("a\x1b\nb", lines=True) == "a\\x1b\nb"
    assert safe_text("\ta\x1b\tb", lines=True) == "\ta\\x1b\tb" and safe_text("a\tb") == "a\\tb"


def test_a_problem_block_holds_no_control_character_and_its_caret_stays_under_its_key():
    problem = Problem(f"unknown key '{HOSTILE}'", Location("environments/dev.yaml", 1, 1), help=f"remove {HOSTILE}")
    source = [f"{HOSTILE[:14]}: 1"]
    block = format_problem(problem, read_source=lambda name: source)
    assert all(line.isprintable() for line in block.splitlines()), block
    shown, caret = block.splitlines()[2], block.splitlines()[3]
    assert shown.endswith("| \\x1b]0;pwned\\x07\\x1b[2J: 1")
    assert len(caret.rstrip()) == len(shown)  # the whole `key: value` entry underlined, escapes included
    assert problem.one_line().isprintable() and "\\x1b]0;pwned" in problem.one_line()


def test_every_review_format_escapes_a_committed_file_name(target):
    project, _ = target
    (project.golden_dir / "dev" / "x\x1b]0;pwned\x07\u202e.yaml").write_text("a: 1\n")
    for output_format in ("text", "markdown", "json"):
        result = CliRunner().invoke(main, ["--project", str(project.root), "diff", "dev", "--format", output_format])
        assert result.exit_code == 1, result.output
        assert "\x1b" not in result.output and "\x07" not in result.output and "\u202e" not in result.output
        assert "\\x1b]0;pwned\\x07" in result.output or "\\u001b]0;pwned\\u0007" in result.output, result.output


@pytest.mark.parametrize("args", [["rules"], ["--help"], ["--version"], ["render", "--help"]])
def test_a_closed_pipe_ends_quietly_with_the_status_of_sigpipe(args):
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before krc writes anything: its first write meets a closed pipe
    try:
        done = subprocess.run([str(KRC), *args], stdout=write_end, stderr=subprocess.PIPE, cwd=REPO_ROOT,
                              timeout=120)
    finally:
        os.close(write_end)
    assert done.stderr == b""
    assert done.returncode == BROKEN_PIPE_EXIT == 128 + 13


def test_krc_refuses_an_older_python_in_one_line(monkeypatch, capsys):
    monkeypatch.setattr(sys, "version_info", (3, 11, 2, "final", 0))  # Debian 12's
    with pytest.raises(SystemExit) as exited:
        run()
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Python 3.11.4 or newer" in err and "this is Python 3.11.2" in err


@pytest.mark.parametrize("version", [(3, 11, 4), (3, 12, 0), (3, 13, 1), (4, 0, 0)])
def test_the_floor_and_newer_start(version):
    assert python_too_old(version) is None


@pytest.mark.parametrize("version", [(3, 11, 3), (3, 10, 14), (2, 7, 18)])
def test_below_the_floor_is_refused(version):
    assert python_too_old(version) is not None


def test_the_floor_is_what_pyproject_declares_and_the_readme_states():
    declared = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    floor = ".".join(map(str, PYTHON_FLOOR))
    assert declared == f">={floor}"
    assert f"Python {floor} or newer" in (REPO_ROOT / "README.md").read_text()
    assert hasattr(__import__("tarfile"), "data_filter")  # what the floor is for, on the Python running the tests


def test_explain_escapes_a_value_holding_control_and_bidirectional_characters(target):
    project, _ = target
    dev = project.root / "environments" / "dev.yaml"
    dev.write_text(dev.read_text().replace("description: ", 'description: "\\e]0;pwned\\a\\u202e" # ', 1))
    result = CliRunner().invoke(main, ["--project", str(project.root), "explain", "dev", "description"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\u202e" not in result.output
    assert 'dev: description = "\\u001b]0;pwned\\u0007\\u202e"' in result.output


@pytest.mark.parametrize("output_format", ["text", "json", "sarif", "github"])
def test_every_lint_format_escapes_a_file_name(tmp_path, output_format):
    manifest = tmp_path / "job\x1b]0;pwned\x07\u202e.yaml"
    manifest.write_text("apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: a, namespace: x}\n"
                        "spec:\n  entrypoint: python x.py\n  clusterSelector: {ray.io/cluster: c}\n"
                        "  runtimeEnvYAML: '- pip'\n")
    result = CliRunner().invoke(main, ["lint", str(manifest), "--format", output_format])
    assert result.exit_code == 1, result.output
    assert "rayjob/runtime-env-yaml" in result.output
    assert "\x1b" not in result.output and "\x07" not in result.output and "\u202e" not in result.output
    assert "pwned" in result.output


def test_a_project_folder_named_in_bytes_that_are_not_utf8_is_refused_in_one_line(tmp_path):
    root = Path(os.fsdecode(os.fsencode(tmp_path) + b"/pr\xffoj"))
    for part in ("environments", "templates"):
        (root / part).mkdir(parents=True)
    result = CliRunner().invoke(main, ["--project", str(root), "envs"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("krc: error: the project's path ") and "pr\\xffoj holds bytes" in result.output
    assert "Traceback" not in result.output and "internal error" not in result.output


def test_rules_shows_a_policy_with_its_control_characters_escaped_and_its_tabs_kept(target):
    project, _ = target
    policy = project.root / "policies" / "dev-no-gpu.cue"
    policy.write_text(policy.read_text().replace("// Development", "// \x1b]0;pwned\x07\u202eDevelopment", 1))
    listed = CliRunner().invoke(main, ["--project", str(project.root), "rules"])
    shown = CliRunner().invoke(main, ["--project", str(project.root), "rules", "policy/dev-no-gpu"])
    for result in (listed, shown):
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and "\x07" not in result.output and "\u202e" not in result.output
    assert "\\x1b]0;pwned\\x07\\u202eDevelopment" in shown.output
    assert "\n\thead?: gpu?: 0" in shown.output  # CUE's indentation is the file's
