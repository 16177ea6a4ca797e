"""Cost of the autoscaler's view in `krc lint` of every environment: warm (answers cached) and cold (one generator
process), against the same lint without it (today's `krc lint`), measured in the same run.

Goal (issue 15): warm stays within 0.5 s of the lint without it. Run: .venv/bin/python bench/bench_autoscaler.py
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from timing import best_of  # bench/timing.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
SHARED = (ROOT.parent / "shared").resolve()
sys.path.insert(0, str(ROOT))
os.environ.setdefault("KRC_CHART_REPOSITORY", (SHARED / "kuberay" / "charts").as_uri())

from compiler import pipeline  # noqa: E402
from compiler.pipeline.environments import findings_with_view  # noqa: E402
from compiler.project.paths import find_project  # noqa: E402


def main() -> None:
    if not (ROOT / "vendor" / "charts").is_dir():
        print("autoscaler: vendor/charts missing; run 'krc vendor' first")
        return
    project = find_project(ROOT)
    names = project.environment_names()

    validated = [pipeline.validate_render(pipeline.compile_environment(project, n)) for n in names]

    def without_view() -> int:
        """`krc lint` of every environment as before the autoscaler's view: compile, validate, rules (the CUE
        policies, the same either way and the noisiest part, are left out)."""
        fresh = [pipeline.validate_render(pipeline.compile_environment(project, n)) for n in names]
        return sum(len(pipeline.validated_findings(v, project)) for v in fresh)

    def with_view() -> int:
        """As `krc lint` adds Ray's view: the compile's findings, then those of the rules that read the view."""
        fresh = [pipeline.validate_render(pipeline.compile_environment(project, n)) for n in names]
        views = pipeline.autoscaler_of(project, fresh)
        return sum(len(findings_with_view(v, pipeline.validated_findings(v, project), w))
                   for v, w in zip(fresh, views, strict=True))

    with_view()  # charts read, schemas compiled, generator answers cached
    baseline = best_of(5, without_view)
    warm = best_of(5, with_view)
    view_warm = best_of(5, lambda: pipeline.autoscaler_of(project, validated))
    with tempfile.TemporaryDirectory() as scratch:
        caches = iter(range(1000))

        def cold() -> object:
            """With an empty cache folder of its own (nothing deleted between rounds: bench_scale.krc_figures)."""
            os.environ["KRC_CACHE_DIR"] = str(Path(scratch) / f"cache{next(caches)}")
            return pipeline.autoscaler_of(project, validated)

        view_cold = best_of(3, cold)
    delta = warm - baseline
    clusters = sum(len(v) for v in (w.configs for w in pipeline.autoscaler_of(project, validated)))
    print(f"autoscaler view in krc lint of {len(names)} environments ({clusters} cluster specs; policies left out)")
    print(f"  lint without the view (today's)  {baseline * 1000:8.1f} ms")
    print(f"  lint with the view, warm cache   {warm * 1000:8.1f} ms  ratio {warm / baseline:5.2f}x  "
          f"{delta * 1000:+7.1f} ms ({'meets' if delta < 0.5 else 'MISSES'} the 0.5 s goal)")
    print(f"  the view alone, warm cache       {view_warm * 1000:8.1f} ms  ratio {view_warm / baseline:5.3f}x")
    print(f"  the view alone, cold (1 process) {view_cold * 1000:8.1f} ms  ratio {view_cold / baseline:5.2f}x")


if __name__ == "__main__":
    main()
