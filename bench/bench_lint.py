"""Speed of `krc lint`: the upstream samples directory and this project's environments.

Reports objects per second and the ratio to plain schema-less YAML loading of the same files, measured in the
same run, plus the wall time of the real command (start-up included; goal: samples under 2 s).
Run: .venv/bin/python bench/bench_lint.py
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import yaml
from timing import best_of  # bench/timing.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
SHARED = (ROOT.parent / "shared").resolve()
SAMPLES = SHARED / "kuberay" / "samples"
sys.path.insert(0, str(ROOT))
os.environ.setdefault("KRC_CHART_REPOSITORY", (SHARED / "kuberay" / "charts").as_uri())

from compiler.lint.manifest_files import paths_context  # noqa: E402
from compiler.lint.runner import lint_objects  # noqa: E402

ALL_GATES = ("RayCronJob=true,RayClusterMTLS=true,RayClusterNetworkPolicy=true,RayClusterHistoryServer=true,"
             "GCSFaultToleranceEmbeddedStorage=true")
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def plain_load(files: list[Path]) -> int:
    return sum(1 for f in files for d in yaml.load_all(f.read_text(encoding="utf-8"), Loader=LOADER) if d)


def main() -> None:
    files = sorted(p for p in SAMPLES.rglob("*") if p.suffix in (".yaml", ".yml"))
    objects = plain_load(files)
    baseline = best_of(5, lambda: plain_load(files))
    lint_objects(paths_context([SAMPLES], "1.7.0", ALL_GATES))  # warm: chart read, schemas compiled
    warm = best_of(5, lambda: lint_objects(paths_context([SAMPLES], "1.7.0", ALL_GATES)))
    print(f"samples: {len(files)} files, {objects} objects")
    print(f"  plain YAML load      {baseline * 1000:8.1f} ms  {objects / baseline:10.0f} objects/s")
    print(f"  lint (warm, in-proc) {warm * 1000:8.1f} ms  {objects / warm:10.0f} objects/s  "
          f"ratio {warm / baseline:5.1f}x plain load")
    krc = str(ROOT / ".venv" / "bin" / "krc")
    walls = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([krc, "lint", "--kuberay-version", "1.7.0", "--feature-gates", ALL_GATES, str(SAMPLES)],
                       capture_output=True, check=False, cwd=ROOT)
        walls.append(time.perf_counter() - start)
    wall = min(walls)
    print(f"  krc lint samples (cold process, start-up included) {wall:5.2f} s wall "
          f"({'meets' if wall < 2 else 'MISSES'} the 2 s goal), ratio {wall / baseline:5.1f}x plain load")
    bench_environments(krc)


def bench_environments(krc: str) -> None:
    if not (ROOT / "vendor" / "charts").is_dir():
        print("environments: vendor/charts missing; run 'krc vendor' first to include them")
        return
    from compiler.lint.environment_context import environment_context
    from compiler.pipeline import compile_environment
    from compiler.project.paths import find_project

    project = find_project(ROOT)
    names = project.environment_names()

    def compile_and_lint() -> int:
        contexts = [environment_context(compile_environment(project, name)) for name in names]
        for context in contexts:
            lint_objects(context)
        return sum(len(c.objects) for c in contexts)

    objects = compile_and_lint()
    env_files = [project.environment_file(n) for n in names] + [project.environments_dir / "base.yaml"]
    baseline = best_of(5, lambda: plain_load([f for f in env_files if f.exists()]))
    warm = best_of(3, compile_and_lint)
    print(f"environments: {len(names)} environments, {objects} rendered objects (CUE policies not included)")
    print(f"  compile + lint (warm) {warm * 1000:8.1f} ms  {objects / warm:10.0f} objects/s  "
          f"ratio {warm / baseline:7.1f}x plain load of the environment files")
    start = time.perf_counter()
    subprocess.run([krc, "lint"], capture_output=True, check=False, cwd=ROOT)
    print(f"  krc lint (all environments and policies, cold process) {time.perf_counter() - start:5.2f} s wall")


if __name__ == "__main__":
    main()
