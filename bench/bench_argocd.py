"""`krc argocd generate` for prod-eks-gpu as Argo CD's sidecar runs it (a fresh 0644 copy, a subprocess), against
the interpreter starting and importing krc's CLI, measured in the same run. Goal: under 2 s (Argo CD's deadline
is 60 s).

Run: .venv/bin/python bench/bench_argocd.py   (needs vendor/ filled: make vendor)
Prints wall times (best and median of ROUNDS) for a warm sidecar (parsed-CRD cache filled) and a cold one, the
split of one in-process generate, and the ratios to the baseline.
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compiler import pipeline  # noqa: E402
from compiler.argocd.parameters import Request  # noqa: E402
from compiler.argocd.selection import select_documents  # noqa: E402
from compiler.argocd.stream import dump_stream  # noqa: E402
from compiler.project.paths import Project  # noqa: E402

KRC = Path(sys.executable).parent / "krc"
ENVIRONMENT = "prod-eks-gpu"
ROUNDS = 5
GOAL_SECONDS = 2.0


def sidecar_copy(destination: Path) -> Path:
    for part in ("environments", "templates", "vendor"):
        shutil.copytree(ROOT / part, destination / part)
    for path in [destination, *destination.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return destination


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed: {done.stderr.decode()}")
    return elapsed


def in_process_split(app: Path) -> dict[str, float]:
    project = Project(app)
    marks = {}
    start = time.perf_counter()
    render = pipeline.compile_environment(project, ENVIRONMENT)
    marks["compile"] = time.perf_counter() - start
    start = time.perf_counter()
    pipeline.check_environment(render)
    marks["lint"] = time.perf_counter() - start
    start = time.perf_counter()
    dump_stream(select_documents(render.objects, render.chart.crds, Request(ENVIRONMENT)))
    marks["select + write stream"] = time.perf_counter() - start
    return marks


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        app = sidecar_copy(Path(tmp) / "repo")
        cache = Path(tmp) / "cache"
        env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "KRC_CACHE_DIR": str(cache),
               "ARGOCD_APP_PARAMETERS": json.dumps([{"name": "environment", "string": ENVIRONMENT}])}
        generate = [str(KRC), "argocd", "generate"]
        baseline = [timed([sys.executable, "-c", "import compiler.cli"], app, env) for _ in range(ROUNDS)]
        cold = []
        for _ in range(ROUNDS):
            shutil.rmtree(cache, ignore_errors=True)
            cold.append(timed(generate, app, env))
        warm = [timed(generate, app, env) for _ in range(ROUNDS)]
        split = in_process_split(app)

    base = min(baseline)
    print(f"krc argocd generate {ENVIRONMENT} (subprocess, sidecar-style copy), {ROUNDS} rounds")
    print(f"baseline: start Python + import krc CLI  best {base:6.3f} s  median {statistics.median(baseline):6.3f} s")
    for label, times in (("generate, warm CRD cache", warm), ("generate, cold CRD cache", cold)):
        print(f"{label:38}  best {min(times):6.3f} s  median {statistics.median(times):6.3f} s  "
              f"ratio {min(times) / base:5.2f}x  goal {GOAL_SECONDS:.1f} s: "
              f"{'met' if statistics.median(times) < GOAL_SECONDS else 'MISSED'}")
    print("in-process split (warm): " + ", ".join(f"{k} {v:.3f} s" for k, v in split.items()))


if __name__ == "__main__":
    main()
