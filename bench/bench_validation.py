"""Validating every upstream sample against the 1.7.0 CRDs through the engine (the API server's own validation,
one request per CRD for the whole batch), against plain YAML loading of the same files.

Run: .venv/bin/python bench/bench_validation.py
Prints objects/s for each stage and the ratio of validation time to YAML loading time, measured in this run.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compiler.charts.package import read_chart  # noqa: E402
from compiler.documents import yamlio  # noqa: E402
from compiler.validation import SchemaSet  # noqa: E402

SHARED = ROOT / ".." / "shared"
SAMPLES = SHARED / "kuberay" / "samples"
CHART = SHARED / "kuberay" / "charts" / "kuberay-operator-1.7.0.tgz"
ROUNDS = 20


def load_samples(files: list[Path]) -> list[Any]:
    return [doc for f in files for doc in yamlio.load_all(f.read_text(encoding="utf-8"), str(f))]


def main() -> None:
    files = sorted(SAMPLES.rglob("*.yaml"))
    start = time.perf_counter()
    for _ in range(ROUNDS):
        documents = load_samples(files)
    yaml_time = (time.perf_counter() - start) / ROUNDS

    start = time.perf_counter()
    chart = read_chart(CHART)
    read_time = time.perf_counter() - start
    start = time.perf_counter()
    schemas = SchemaSet.from_crds(chart.crds)
    ours = [d for d in documents if schemas.knows(d)]
    schemas.validate_many(ours)  # the first batch also sends each CRD to the engine, which compiles it
    cold_time = time.perf_counter() - start

    start = time.perf_counter()
    errors = 0
    for _ in range(ROUNDS):
        for result in schemas.validate_many(ours):
            errors += sum(p.severity == "error" for p in result.problems)
    warm_time = (time.perf_counter() - start) / ROUNDS

    print(f"samples: {len(files)} files, {len(documents)} documents, {len(ours)} ray.io objects, "
          f"{errors // ROUNDS} errors")
    print(f"yaml load (baseline):          {yaml_time * 1e3:8.1f} ms  {len(documents) / yaml_time:9.0f} docs/s")
    print(f"read chart 1.7.0 (once):       {read_time * 1e3:8.1f} ms")
    print(f"engine start, CRDs + first batch:    {cold_time * 1e3:8.1f} ms  {len(ours) / cold_time:9.0f} objects/s")
    print(f"validation, compiled:          {warm_time * 1e3:8.1f} ms  {len(ours) / warm_time:9.0f} objects/s")
    print(f"ratio validation / yaml load:  {warm_time / yaml_time:8.2f}x (compiled), "
          f"{cold_time / yaml_time:.2f}x (including compile)")


if __name__ == "__main__":
    main()
