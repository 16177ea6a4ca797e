"""`krc crd-diff`: exit codes, the three formats, byte-identical output, and the formatters as a library."""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_crddiff_mutations import _field, _spec, base_crd

from compiler.cli import main
from compiler.crddiff import compare_crds, format_markdown, format_text
from compiler.documents import yamlio

CHARTS = Path(__file__).resolve().parents[2] / ".." / "shared" / "kuberay" / "charts"


def _write(path: Path, *crds: dict) -> str:
    path.write_text(yamlio.dump_all(list(crds)), encoding="utf-8")
    return str(path)


def _run(tmp_path: Path, *args: str):
    # --project points at an empty directory: no vendored charts, whatever the working directory holds
    return CliRunner().invoke(main, ["--project", str(tmp_path), "crd-diff", *args])


@pytest.fixture
def pair(tmp_path) -> tuple[str, str]:
    """A breaking pair: a field removed, a field added, an enum value added."""
    new = base_crd()
    _spec(new)["properties"].pop("name")
    _spec(new)["properties"]["extra"] = {"type": "boolean"}
    _field(new, "mode")["enum"].append("c|d")
    return _write(tmp_path / "old.yaml", base_crd()), _write(tmp_path / "new.yaml", new)


def test_breaking_change_exits_1_with_text_grouped_by_crd(tmp_path, pair):
    result = _run(tmp_path, *pair)
    assert result.exit_code == 1, result.output
    assert result.output.splitlines() == [
        "widgets.example.com",
        "  breaking v1 spec.name: field removed: existing values are pruned and clients setting it break "
        "[field-removed]",
        "  warning  v1 spec.mode: enum values added: c|d; an older operator may not handle them [enum-value-added]",
        "  info     v1 spec.extra: new optional field (boolean) [field-added]",
        "3 CRD changes: 1 breaking, 1 warning, 1 info",
    ]


def test_non_breaking_and_identical_exit_0(tmp_path):
    old = _write(tmp_path / "old.yaml", base_crd())
    new = base_crd()
    _spec(new)["properties"]["extra"] = {"type": "string"}
    result = _run(tmp_path, old, _write(tmp_path / "new.yaml", new))
    assert (result.exit_code, result.output.splitlines()[-1]) == (0, "1 CRD change: 0 breaking, 0 warning, 1 info")
    same = _run(tmp_path, old, old, "--format", "json")
    assert (same.exit_code, same.output) == (0, "[]\n")


def test_json_is_a_sorted_list_with_the_documented_keys(tmp_path, pair):
    result = _run(tmp_path, *pair, "--format", "json")
    assert result.exit_code == 1
    changes = json.loads(result.output)
    assert [(c["severity"], c["check"], c["path"]) for c in changes] == [
        ("breaking", "field-removed", "spec.name"), ("warning", "enum-value-added", "spec.mode"),
        ("info", "field-added", "spec.extra")]
    assert set(changes[0]) == {"crd", "version", "path", "check", "severity", "message", "old", "new"}
    assert changes[1]["old"] == ["a", "b"] and changes[1]["new"] == ["a", "b", "c|d"]


def test_markdown_is_a_table_with_escaped_cells(tmp_path, pair):
    result = _run(tmp_path, *pair, "--format", "markdown")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[:3] == ["### CRD changes", "", "3 CRD changes: 1 breaking, 1 warning, 1 info"]
    rows = [line for line in lines if line.startswith("| ") and "---" not in line]
    assert rows[0] == "| Severity | CRD | Version | Field | Check | Change |"
    assert rows[1].startswith("| **breaking** | `widgets.example.com` | v1 | `spec.name` | field-removed |")
    assert "c\\|d" in rows[2] and all(row.count(" | ") == 5 for row in rows)


def test_output_is_byte_identical_whatever_the_input_order(tmp_path):
    other = copy.deepcopy(base_crd())
    other["metadata"]["name"] = "gadgets.example.com"
    changed = [base_crd(), copy.deepcopy(other)]
    for crd in changed:
        _spec(crd)["properties"].pop("note")
        _field(crd, "replicas")["maximum"] = 3
    forward = (_write(tmp_path / "a.yaml", base_crd(), other), _write(tmp_path / "b.yaml", *changed))
    backward = (_write(tmp_path / "c.yaml", other, base_crd()), _write(tmp_path / "d.yaml", *reversed(changed)))
    for output_format in ("json", "text", "markdown"):
        outputs = {_run(tmp_path, *forward, "--format", output_format).output,
                   _run(tmp_path, *forward, "--format", output_format).output,
                   _run(tmp_path, *backward, "--format", output_format).output}
        assert len(outputs) == 1, output_format
    assert "gadgets.example.com" in outputs.pop()


def test_real_chart_upgrade_through_the_cli(tmp_path):
    old, new = str(CHARTS / "kuberay-operator-1.6.2.tgz"), str(CHARTS / "kuberay-operator-1.7.0.tgz")
    first = _run(tmp_path, old, new, "--format", "json")
    assert first.exit_code == 1
    changes = json.loads(first.output)
    assert sum(c["severity"] == "breaking" for c in changes) == 17
    assert _run(tmp_path, str(CHARTS / "kuberay-operator-1.5.2.tgz"), old).exit_code == 0


@pytest.mark.parametrize("old, message", [
    ("does/not/exist", "is not a file, a directory or NAME@VERSION"),
    ("EMPTY", "no CustomResourceDefinition found"),
    ("BROKEN", "invalid YAML"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, old, message):
    if old == "EMPTY":
        old = str(tmp_path / "empty.yaml")
        Path(old).write_text("kind: ConfigMap\n", encoding="utf-8")
    elif old == "BROKEN":
        old = str(tmp_path / "broken.yaml")
        Path(old).write_text("kind: [\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["--project", str(tmp_path), "crd-diff", old,
                                       _write(tmp_path / "new.yaml", base_crd())])
    assert result.exit_code == 2
    # the problem on one line, then the fix on a `help:` line (no source line to show for these)
    lines = result.output.strip().splitlines()
    assert message in lines[0] and len(lines) == 2 and lines[1].startswith("  help: ")


def test_markdown_budget_keeps_the_summary_and_counts_what_it_left_out():
    old, new = base_crd(), base_crd()
    for i in range(400):
        _spec(new)["properties"][f"field{i:03}"] = {"type": "string"}
    _spec(new)["properties"].pop("name")
    changes = compare_crds([old], [new])
    report = format_markdown(changes, max_chars=4000)
    assert len(report) <= 4000
    assert "401 CRD changes: 1 breaking, 0 warning, 400 info" in report
    assert "`spec.name`" in report  # the breaking row survives; info rows are the ones cut
    shown = report.count("| info |")
    assert f"_{400 - shown} more changes not shown ({400 - shown} info)" in report
    assert format_text(changes).count("\n") == 403


def test_output_does_not_depend_on_the_hash_seed(tmp_path, pair):
    """Sets and dict unions inside the walk must not leak their order: run the real CLI under two seeds."""
    krc = Path(sys.executable).parent / "krc"
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([str(krc), "--project", str(tmp_path), "crd-diff", *pair, "--format", "json"],
                              capture_output=True, env=env, check=False)
        assert done.returncode == 1, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1
