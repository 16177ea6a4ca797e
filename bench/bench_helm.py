"""The operator chart through the real Helm: `krc render` of every environment with Helm's output cached (warm)
and with the `helm template` cache emptied before each run (cold), against the floor of starting Python.

Both are fresh processes, best of several runs, in the same run of this script; the CRD parse cache stays warm in
both, so the difference is Helm's. Run from the repository root: `make bench`.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import best_of  # bench/timing.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
RUNS = 5

IN_PROCESS = """
import shutil, sys, time
from pathlib import Path
from compiler import pipeline
from compiler.project.paths import Project
project, cache, runs = Project(Path(sys.argv[1])), Path(sys.argv[2]), int(sys.argv[3])
names = project.environment_names()
def once(cold):
    if cold:
        shutil.rmtree(cache / "helm-template", ignore_errors=True)
    start = time.perf_counter()
    for name in names:
        pipeline.compile_environment(project, name)
    return time.perf_counter() - start
once(False)
print(min(once(False) for _ in range(runs)), min(once(True) for _ in range(runs)))
"""


def main() -> int:
    krc = str(Path(sys.executable).with_name("krc"))
    with tempfile.TemporaryDirectory(prefix="krc-bench-helm-") as scratch:
        env = {**os.environ, "KRC_CACHE_DIR": scratch}
        subprocess.run([krc, "vendor"], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)

        def render() -> None:
            subprocess.run([krc, "render"], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)

        def cold() -> None:
            shutil.rmtree(Path(scratch) / "helm-template", ignore_errors=True)
            render()

        render()  # CRD parse cache, Helm version and template caches
        warm_time = best_of(RUNS, render)
        cold_time = best_of(RUNS, cold)
        floor = best_of(RUNS, lambda: subprocess.run([sys.executable, "-c", "import compiler.cli"], cwd=ROOT,
                                                     env=env, check=True))
        # in one process: what Helm costs a render of both environments, without Python's start-up
        inproc = subprocess.run([sys.executable, "-c", IN_PROCESS, str(ROOT), scratch, str(RUNS)], cwd=ROOT, env=env,
                                check=True, capture_output=True, text=True).stdout
    print(f"krc render, Helm output cached (warm, best of {RUNS}): {warm_time:.3f} s")
    print(f"krc render, helm template run for each environment (cold): {cold_time:.3f} s "
          f"(Helm adds {cold_time - warm_time:.3f} s)")
    warm_inproc, cold_inproc = (float(x) for x in inproc.split())
    print(f"render of both environments in one process: warm {warm_inproc:.3f} s, cold {cold_inproc:.3f} s; "
          f"goal: warm under 0.5 s -> {'met' if warm_inproc < 0.5 else 'NOT met'}")
    print(f"floor (python + import krc): {floor:.3f} s; ratio warm/floor {warm_time / floor:.1f}x, "
          f"cold/warm {cold_time / warm_time:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
