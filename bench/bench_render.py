"""Warm `krc render` of every environment versus the floor of loading the same YAML and writing the same bytes.

Both are timed as fresh processes (Python start-up included), best of several runs, in the same run of this
script, so the ratio is stable across machines. Run from the repository root: `make bench`.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import best_of  # bench/timing.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
RUNS = 7

FLOOR = """
import sys, yaml
from pathlib import Path
src, dst = Path(sys.argv[1]), Path(sys.argv[2])
for env in sorted((src / "environments").glob("*.yaml")):
    yaml.load(env.read_text(), Loader=yaml.CSafeLoader)
for path in sorted((src / "rendered").rglob("*")):
    if path.is_file():
        out = dst / path.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(path.read_bytes())
"""


def best_run(command: list[str], env: dict[str, str]) -> float:
    return best_of(RUNS, lambda: subprocess.run(command, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL))


def main() -> int:
    env = dict(os.environ)
    krc = str(Path(sys.executable).with_name("krc"))
    subprocess.run([krc, "vendor"], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([krc, "render"], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)  # warm caches
    render = best_run([krc, "render"], env)
    with tempfile.TemporaryDirectory() as scratch:
        floor = best_run([sys.executable, "-c", FLOOR, str(ROOT), scratch], env)
    files = sum(1 for p in (ROOT / "rendered").rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in (ROOT / "rendered").rglob("*") if p.is_file())
    print(f"krc render (all environments, warm, best of {RUNS}): {render:.3f} s wall,"
          f" {files} files, {size / 1e6:.1f} MB")
    print(f"floor (python + load the same YAML + write the same bytes): {floor:.3f} s")
    print(f"ratio render/floor: {render / floor:.1f}x   goal: render under 0.5 s"
          f" -> {'met' if render < 0.5 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
