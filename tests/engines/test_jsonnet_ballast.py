"""The ballast the command's own process holds for the Go collector inside gojsonnet (engines/jsonnet_ballast.py):
real processes, the real gojsonnet, and the Go runtime's own trace of its collections."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.settings import collector

ROOT = Path(__file__).resolve().parents[2]

# many small evaluations, as a render's batches are: much garbage, little kept alive
EVALUATIONS = """
import hashlib, sys, _gojsonnet
from compiler.engines import jsonnet_ballast
held = jsonnet_ballast.hold(int(sys.argv[1]))
snippet = 'std.manifestJson([{name: "n" + j, spec: {a: [j, j + 1], b: std.toString(j)}} for j in std.range(1, 400)])'
digest = hashlib.sha256()
for _ in range(300):
    digest.update(_gojsonnet.evaluate_snippet("x.jsonnet", snippet).encode())
print(held, digest.hexdigest())
"""

RESIDENT = """
import sys
from compiler.engines import jsonnet_ballast
def resident():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 >> 20
before = resident()
print(jsonnet_ballast.hold(0), jsonnet_ballast.hold(8), resident() - before)
before = resident()
print(jsonnet_ballast.hold(32), resident() - before)
"""


def _python(code: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("GOGC", "GODEBUG")}
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, check=True,
                          env={**environment, "PYTHONPATH": str(ROOT), **env})


def test_a_ballast_halves_the_collections_of_the_same_evaluations():
    """At Go's default target, 4 MB held leaves the runtime (its gctrace) collecting half as often or less over
    the same evaluations, whose results do not change."""
    runs = {mb: _python(EVALUATIONS, str(mb), GODEBUG="gctrace=1") for mb in (0, 4)}
    collections = {mb: sum(line.startswith("gc ") for line in run.stderr.splitlines()) for mb, run in runs.items()}
    assert runs[0].stdout.split()[0] == "False" and runs[4].stdout.split()[0] == "True"
    assert runs[0].stdout.split()[1] == runs[4].stdout.split()[1]
    assert collections[0] > 100 and collections[4] * 3 < collections[0] * 2, collections


def test_the_ballast_is_held_once_in_the_go_heap():
    """None for 0; the size asked for, resident at once (the VM copies the text into a Go string); then nothing more
    for a later call."""
    first, second = _python(RESIDENT).stdout.splitlines()
    none, held, grown = first.split()
    assert (none, held) == ("False", "True") and 8 <= int(grown) < 24
    again, grown_again = second.split()
    assert again == "True" and int(grown_again) < 4


def test_no_ballast_when_krcs_environment_sets_the_collectors_target(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("GOGC", raising=False)
    assert collector.command_ballast_mb() == collector.COMMAND_BALLAST_MB == 4
    monkeypatch.setenv("GOGC", "150")
    assert collector.command_ballast_mb() == 0
