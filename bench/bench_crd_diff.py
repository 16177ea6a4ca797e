"""Benchmark: `krc crd-diff` of the KubeRay chart 1.6.2 -> 1.7.0 (four CRDs, about 4 MB of YAML per side).

Baselines measured in the same run, on the same parsed CRDs:
- DeepDiff (the generic structural diff) of each pair of CRDs, against `compare_crds`;
- PyYAML's CSafeLoader, against `yamlio.load_all` (libyaml's events straight to data: yaml_events);
and the wall time of the CLI as a subprocess, Python start-up included (goal: under 1 s).

Run: .venv/bin/python bench/bench_crd_diff.py
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

from deepdiff import DeepDiff
from timing import best_of  # bench/timing.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from compiler.crddiff import compare_crds, load_crd_source  # noqa: E402
from compiler.documents import yamlio  # noqa: E402

CHARTS = ROOT / ".." / "shared" / "kuberay" / "charts"
OLD = CHARTS / "kuberay-operator-1.6.2.tgz"
NEW = CHARTS / "kuberay-operator-1.7.0.tgz"


def crd_texts(path: Path) -> list[str]:
    with tarfile.open(path) as tar:
        return [tar.extractfile(m).read().decode("utf-8")  # type: ignore[union-attr]
                for m in tar.getmembers() if m.isfile() and "/crds/" in m.name]


def main() -> None:
    texts = crd_texts(OLD) + crd_texts(NEW)
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    fast_parse = best_of(3, lambda: [yamlio.load_all(t, "crd") for t in texts])
    safe_parse = best_of(1, lambda: [list(yaml.load_all(t, Loader=yamlio.SafeLoader)) for t in texts])
    print(f"parse both charts' CRDs ({megabytes:.1f} MB): fast loader {fast_parse:.3f} s, "
          f"CSafeLoader {safe_parse:.3f} s, ratio {safe_parse / fast_parse:.1f}x")

    old, new = load_crd_source(str(OLD), None), load_crd_source(str(NEW), None)
    changes = compare_crds(old, new)
    krc = best_of(5, lambda: compare_crds(old, new))
    old_by_name = {c["metadata"]["name"]: c for c in old}
    pairs = [(old_by_name[c["metadata"]["name"]], c) for c in new if c["metadata"]["name"] in old_by_name]
    reports: list[Any] = []
    deep = best_of(1, lambda: reports.extend(DeepDiff(a, b) for a, b in pairs))
    deep_items = sum(len(item) for report in reports for item in report.values())
    print(f"compare {len(new)} CRDs: krc {krc * 1000:.1f} ms ({len(changes)} classified changes), "
          f"DeepDiff {deep:.2f} s ({deep_items} raw differences), ratio {deep / krc:.0f}x")

    krc_bin = Path(sys.executable).parent / "krc"
    command = [str(krc_bin), "--project", str(ROOT / "bench"), "crd-diff", str(OLD), str(NEW), "--format", "json"]
    walls = []
    for _ in range(5):
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True)
        walls.append(time.perf_counter() - start)
        assert done.returncode == 1, done.stderr  # 1.7.0 removes fields: breaking
    bare = best_of(3, lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))
    print(f"CLI wall time, Python start-up included: best {min(walls):.3f} s, median {statistics.median(walls):.3f} s "
          f"(bare interpreter start-up {bare:.3f} s; goal < 1 s)")
    print(f"end to end vs parse + DeepDiff: {(safe_parse + deep) / min(walls):.0f}x")


if __name__ == "__main__":
    main()
