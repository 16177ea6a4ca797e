"""The generator ends as soon as krc closes its stdin, every answer written, without Python's teardown of Ray's
heap or Ray's exit handlers (generator_runner._leave): krc waits for it at the end of a command. Run in the Ray
environment, in both of its modes."""
from __future__ import annotations

import os
import socket
import subprocess
import tempfile
from pathlib import Path

RUNNER_DIR = Path(__file__).resolve().parents[2] / "compiler" / "autoscaler"
PYTHON = Path(os.environ["KRC_RAY_ENVS"]) / "2.58.0" / "bin" / "python"

# the runner's main() with an exit handler registered first: Python's usual exit would run it after main returns
WRAPPED = """
import atexit, sys
sys.path.insert(0, sys.argv.pop(1))
atexit.register(lambda: sys.stderr.write("teardown ran\\n"))
import generator_runner
sys.exit(generator_runner.main())
"""


def _runner(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([str(PYTHON), "-I", "-c", WRAPPED, str(RUNNER_DIR), *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={"RAY_USAGE_STATS_ENABLED": "0"})


def test_on_its_pipe_the_generator_answers_then_ends_without_the_teardown() -> None:
    runner = _runner()
    out, err = runner.communicate(b'{"clusters": {}}\n{"clusters": {}}\n', timeout=120)
    assert runner.returncode == 0
    assert [line.startswith(b'{"rayVersion": "2.58.0"') for line in out.splitlines()] == [True, True]
    assert b"teardown ran" not in err


def test_on_its_socket_the_generator_ends_with_its_starters_pipe_without_the_teardown() -> None:
    with tempfile.TemporaryDirectory(dir="/tmp") as folder:
        path = os.path.join(folder, "ray.sock")
        runner = _runner("--socket", path)
        assert runner.stdout is not None and runner.stdin is not None
        assert runner.stdout.readline() == b"ready\n"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(path)
            conn.sendall(b'{"clusters": {}}\n')
            assert conn.makefile("rb").readline().startswith(b'{"rayVersion": "2.58.0"')
        runner.stdin.close()
        assert runner.wait(timeout=120) == 0
        assert runner.stderr is not None and b"teardown ran" not in runner.stderr.read()
