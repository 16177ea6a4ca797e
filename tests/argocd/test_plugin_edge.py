"""What Argo CD shows of a failed plugin command: one line (it prints the command's whole stderr as the
Application's error), and krc's own when the command runs out of time (Argo CD's deadline kills it silently).
tests/argocd/harness runs the same through Argo CD's real cmp server; these are the fast checks."""
from __future__ import annotations

from pathlib import Path

from argocd_sidecar import argocd_environ, parameters, run, run_sidecar


def test_an_error_is_one_line(app_dir: Path, cache_dir: Path) -> None:
    for command in ("generate", "init"):
        result = run(app_dir, argocd_environ(cache_dir, parameters("staging")), command)
        assert result.returncode == 2 and result.stdout == b""
        assert result.stderr == "krc: error: unknown environment 'staging'; choose one of: dev, prod-eks-gpu\n"


def test_a_template_error_keeps_its_place_in_the_line(app_dir: Path, cache_dir: Path) -> None:
    core = app_dir / "templates" / "objects" / "core.jsonnet"
    core.write_text(core.read_text().replace("kr.get(env, 'namespaces', [])", "kr.get(env, 'namespaces', []) + nope"))
    result = run(app_dir, argocd_environ(cache_dir, parameters("dev")))
    assert result.returncode == 2 and result.stdout == b""
    line = result.stderr.rstrip("\n")
    assert "\n" not in line and line.startswith("templates/objects/core.jsonnet:") and "Unknown variable: nope" in line


def test_a_command_past_its_time_stops_itself_with_a_message(app_dir: Path, cache_dir: Path) -> None:
    # minutes of Jsonnet; a process of its own, so the abandoned evaluation ends with it
    core = app_dir / "templates" / "objects" / "core.jsonnet"
    core.write_text(core.read_text() + "+ [x for x in std.range(1, 30000) for y in std.range(1, 30000) if x * y < 0]\n")
    result = run_sidecar(app_dir, argocd_environ(cache_dir, parameters("dev"), {"KRC_PLUGIN_SECONDS": "2"}))
    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr.count("\n") == 1
    assert "krc argocd generate stopped itself: running for 2 s exceeds the plugin command time" in result.stderr
    assert "KRC_PLUGIN_SECONDS" in result.stderr


def test_a_bad_time_bound_is_one_line(app_dir: Path, cache_dir: Path) -> None:
    result = run(app_dir, argocd_environ(cache_dir, parameters("dev"), {"KRC_PLUGIN_SECONDS": "soon"}))
    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr == ("krc: error: KRC_PLUGIN_SECONDS='soon' is not a positive whole number; unset it or "
                             "give a number\n")
