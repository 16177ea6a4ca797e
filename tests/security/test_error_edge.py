"""The one error edge: exit 2 for bad input and environmental failures, exit 3 for krc's own bugs, no traceback
unless KRC_DEBUG=1. Tested on the real edge class, with commands that fail the three ways."""
from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from compiler.cli import ErrorEdge, main
from compiler.diagnostics.problems import KrcError, Location


@click.group(cls=ErrorEdge)
def edge() -> None:
    pass


@edge.command("bug")
def bug() -> None:
    raise RuntimeError("an invariant broke")


@edge.command("disk")
def disk() -> None:
    open("/proc/krc-cannot-create-this", "w")  # a real OSError from the kernel


@edge.command("input")
def bad_input() -> None:
    raise KrcError("a bad value; fix it", Location("environments/dev.yaml", 3, 5))


@edge.group("nested")
def nested() -> None:
    pass


@nested.command("bug")
def nested_bug() -> None:
    {}["missing"]


@pytest.mark.parametrize("args", [["bug"], ["nested", "bug"]])
def test_an_unexpected_exception_is_an_internal_error_with_exit_3(args, monkeypatch):
    monkeypatch.delenv("KRC_DEBUG", raising=False)
    result = CliRunner().invoke(edge, args)
    assert result.exit_code == 3
    assert "internal error" in result.output and "KRC_DEBUG=1" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_krc_debug_shows_the_traceback(monkeypatch):
    monkeypatch.setenv("KRC_DEBUG", "1")
    result = CliRunner().invoke(edge, ["bug"])
    assert isinstance(result.exception, RuntimeError)


def test_an_environmental_failure_is_exit_2_in_one_line(monkeypatch):
    monkeypatch.delenv("KRC_DEBUG", raising=False)
    result = CliRunner().invoke(edge, ["disk"])
    assert result.exit_code == 2
    assert result.output.startswith("krc: error ") and "/proc/krc-cannot-create-this" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_bad_input_is_exit_2_with_its_location():
    result = CliRunner().invoke(edge, ["input"])
    assert result.exit_code == 2
    assert result.output.startswith("environments/dev.yaml:3:5: error: a bad value")
    assert "help: fix it" in result.output


def test_krc_itself_uses_the_edge():
    assert isinstance(main, ErrorEdge)


def test_a_committed_file_name_cannot_forge_output_lines(target):
    project, _ = target
    (project.golden_dir / "dev" / "x\nchanged: forged.yaml").write_text("a: 1\n")
    result = CliRunner().invoke(main, ["--project", str(project.root), "check", "dev"])
    assert result.exit_code == 1
    assert "changed: forged.yaml" not in result.output.splitlines()
    assert "gone: golden/dev/x\\nchanged: forged.yaml" in result.output.splitlines()
