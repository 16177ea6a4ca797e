"""KubeRay's builders over a synthetic project (bench/synthetic.py) with every environment pinned to a KubeRay
version krc has a build of: `krc render` fills the cache first, then the Pods of every cluster of every
environment are made in one krc process (one KubeRay process), and the time of that part is reported apart:
with KubeRay's answers dropped from the cache (the build asked about every object), then as kept there.
Usage: python bench/bench_pods.py [N]   (default 100; the issue's figure is N=500)
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import synthetic

from compiler import pipeline
from compiler.native import binary, kuberay
from compiler.pipeline.pods import render_pods
from compiler.project.paths import Project

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    [version] = binary.built_versions()[-1:]
    with tempfile.TemporaryDirectory(prefix="krc-bench-pods-") as tmp:
        project_dir = synthetic.build_project(Path(tmp) / "project", n)
        for i in range(n):
            data = synthetic.environment(i)
            data["operator"]["chart"]["version"] = version
            path = project_dir / "environments" / f"{synthetic.environment_name(i)}.yaml"
            path.write_text(synthetic.environment_text(data), encoding="utf-8")
        env = {**os.environ, "KRC_CACHE_DIR": str(Path(tmp) / "cache")}
        krc = [str(Path(sys.executable).parent / "krc"), "--project", str(project_dir)]
        start = time.perf_counter()
        subprocess.run([*krc, "render"], check=True, env=env, cwd=ROOT, capture_output=True)
        render_seconds = time.perf_counter() - start
        os.environ["KRC_CACHE_DIR"] = env["KRC_CACHE_DIR"]
        project = Project(project_dir)
        start = time.perf_counter()
        renders = pipeline.compile_environments(project, project.environment_names())
        cached_seconds = time.perf_counter() - start
        shutil.rmtree(Path(env["KRC_CACHE_DIR"]) / kuberay.ANSWERS.name, ignore_errors=True)
        start = time.perf_counter()
        found = [item for render in renders for item in render_pods(render)]
        pods_seconds = time.perf_counter() - start
        start = time.perf_counter()
        again = [item for render in renders for item in render_pods(render)]
        kept_seconds = time.perf_counter() - start
        assert again == found
    clusters = sum(len(item.clusters) for item in found)
    pods = sum(len(c["pods"]) for item in found for c in item.clusters)
    services = sum(len(c["services"]) for item in found for c in item.clusters)
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}, KubeRay {version}")
    print(f"N={n}: krc render cold {render_seconds:.1f} s; the renders again from the cache {cached_seconds:.1f} s")
    print(f"Pods of {len(found)} custom resources ({clusters} clusters: {pods} Pods, one per group, and {services} "
          f"Services): {pods_seconds:.1f} s, {1000 * pods_seconds / max(n, 1):.1f} ms per environment; "
          f"with KubeRay's answers from the cache {kept_seconds:.1f} s, "
          f"ratio {pods_seconds / max(kept_seconds, 1e-9):.1f}x")


if __name__ == "__main__":
    main()
