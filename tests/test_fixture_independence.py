"""The tool's tests use their own fixture project: a team that edits the shipped environments/ and accepts golden/
still gets a green `make test` (the shipped files are checked by `make render`, i.e. krc check)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from project_support import FIXTURE_PROJECT, REPO_ROOT

from compiler.cli import main
from compiler.output import folders

# What a checkout needs to run its tests (the package itself is the installed one, the same code).
CHECKOUT_PARTS = ("environments", "golden", "templates", "policies", "deploy", "tests", ".github")
# The tests that used to read the shipped environments and golden/ directly, and the CLI round trip.
AFFECTED_TESTS = ("tests/test_pipeline.py", "tests/test_cli.py")
NEW_GROUP = """      - name: highmem
        minReplicas: 0
        maxReplicas: 4
        cpu: 4
        memory: 32Gi
"""


def _checkout(destination: Path, vendor_cache: Path, shared_dir: Path) -> Path:
    for part in CHECKOUT_PARTS:
        shutil.copytree(REPO_ROOT / part, destination / part,
                        ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    shutil.copy2(REPO_ROOT / "pyproject.toml", destination / "pyproject.toml")
    shutil.copytree(vendor_cache, destination / "vendor")
    (destination.parent / "shared").symlink_to(shared_dir, target_is_directory=True)
    return destination


def test_the_fixture_is_the_shipped_project_of_today():
    """Identical today, so the assertions written against the shipped files hold; they may drift apart later."""
    for part in ("environments", "golden"):
        assert folders.read_tree(FIXTURE_PROJECT / part) == folders.read_tree(REPO_ROOT / part), part


def test_editing_the_shipped_environments_leaves_the_tests_green(tmp_path: Path, vendor_cache: Path,
                                                                 shared_dir: Path):
    checkout = _checkout(tmp_path / "checkout", vendor_cache, shared_dir)
    dev = checkout / "environments" / "dev.yaml"
    assert dev.read_text().endswith("        memory: 2Gi\n")
    dev.write_text(dev.read_text() + NEW_GROUP)
    accepted = CliRunner().invoke(main, ["--project", str(checkout), "golden"])
    assert accepted.exit_code == 0, accepted.output
    cluster = (checkout / "golden" / "dev" / "manifests" / "raycluster-ray-cpu-demo.yaml").read_text()
    assert "groupName: highmem" in cluster
    assert folders.read_tree(checkout / "golden") != folders.read_tree(FIXTURE_PROJECT / "golden")
    assert CliRunner().invoke(main, ["--project", str(checkout), "check"]).exit_code == 0

    environ = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    environ["KRC_TEST_CACHE_DIR"] = os.environ["KRC_CACHE_DIR"]  # this run's cache: what is unchanged is warm
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *AFFECTED_TESTS],
                            cwd=checkout, env=environ, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and "failed" not in result.stdout
