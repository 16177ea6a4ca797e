"""krc as checked out against krc at another revision, on the same synthetic project, runs alternating.

A machine whose speed drifts (a shared host: the same Python loop took 2.0 s and 3.4 s within an hour here) makes
figures from different runs incomparable; taken in turns, the two krcs meet the same drift, and their ratio is
what the change bought. The revision is cloned into a scratch folder beside its own engine and KubeRay builds
(built there with the machine's Go; the module cache makes that quick) and runs on this checkout's virtual
environment with its own `compiler` package first on the path; Ray's generators are shared.

Usage: .venv/bin/python bench/versus.py REVISION [--n 500] [--rounds 2] [--commands render,lint,policy]
(--commands '' measures the one-changed render only)
Prints, per command, each round's figures for both (cold: a fresh copy of the project and an empty cache folder of
its own), the medians and new/old ratios, and the one-changed render (warm caches, one environment changed before
each run, as bench_scale.py changes it). For a change that leaves the engine's work alone, the ratio of the rest of
the CPU (krc's Python and its helpers) to the engine's, new against old, cancels even a drift within a round: the
same code measured twice here gave that ratio within 3 % while its wall time moved by a fifth.
Not part of `make bench` (it needs a revision); the figures go in a closing note or a pull request.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import bench_scale  # bench/bench_scale.py, beside this script: the same measure (tree CPU, summed resident sets)
import synthetic
import timing

ROOT = Path(__file__).resolve().parents[1]


def checkout(revision: str, scratch: Path) -> Path:
    """The revision's tree with its engine and KubeRay builds, ready to run on this checkout's venv."""
    clone = scratch / "other"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", revision], check=True)
    (clone / ".venv-ray").symlink_to(ROOT / ".venv-ray")
    subprocess.run(["make", "-C", str(clone), "engine/bin/krc-engine", "kuberay"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "compileall", "-q", str(clone / "compiler")],
                   check=True)
    return clone


def krc_of(tree: Path) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that run krc from `tree` (its compiler package before the installed one)."""
    python = str(ROOT / ".venv" / "bin" / "python")
    return [python, "-c", "import sys; from compiler.cli import run; sys.argv[0] = 'krc'; sys.exit(run())"], \
        {"PYTHONPATH": str(tree)}


def median_ratio(new: list[bench_scale.Run], old: list[bench_scale.Run], field: Callable[[bench_scale.Run], float]) \
        -> float:
    return statistics.median(field(r) for r in new) / statistics.median(field(r) for r in old)


def report(label: str, runs: dict[str, list[bench_scale.Run]]) -> None:
    for who in ("old", "new"):
        for number, run in enumerate(runs[who], start=1):
            print(f"  {label:22s} {who} #{number}  {run}")
    new, old = runs["new"], runs["old"]
    print(f"  {label:22s} new/old (medians): {median_ratio(new, old, lambda r: r.wall):.2f} wall, "
          f"{median_ratio(new, old, lambda r: r.cpu):.2f} cpu, {median_ratio(new, old, lambda r: r.peak_mb):.2f} "
          f"memory; {_beside_engine(new, old)}", flush=True)


def _beside_engine(new: list[bench_scale.Run], old: list[bench_scale.Run]) -> str:
    """The CPU besides the engine's per engine CPU second, new against old (medians): see the module's docstring."""
    if not all(r.engine_cpu > 0 for r in (*new, *old)):
        return "no engine CPU seen"
    return f"{median_ratio(new, old, lambda r: (r.cpu - r.engine_cpu) / r.engine_cpu):.2f} rest per engine CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revision")
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--commands", default="render,lint,policy")
    args = parser.parse_args()
    started = time.monotonic()  # anything removed before this run (an earlier benchmark's folders) is older
    with tempfile.TemporaryDirectory(prefix="krc-versus-") as folder:
        scratch = Path(folder)
        trees = {"old": checkout(args.revision, scratch), "new": ROOT}
        # a project copy each: rendered/ and its stamps are each krc's own, as they would be on two machines; a cold
        # run gets a fresh copy (no rendered/) and an empty cache folder of its own, and nothing is removed before
        # the end (bench_scale.krc_figures: removing thousands of files slows the next run that creates as many)
        source = synthetic.build_project(scratch / "project", args.n)
        projects = {who: Path(shutil.copytree(source, scratch / f"project-{who}", symlinks=True))
                    for who in ("old", "new")}
        copies = iter(range(1_000_000))
        base = dict(os.environ)
        base.setdefault("KRC_CHART_REPOSITORY", (ROOT.parent / "shared" / "kuberay" / "charts").resolve().as_uri())
        if (ROOT / ".venv-ray").is_dir():  # lint runs Ray's autoscaler generator, as make bench's figures do
            base.setdefault("KRC_RAY_ENVS", str(ROOT / ".venv-ray"))

        def run(who: str, command: str, cold: bool) -> bench_scale.Run:
            project, cache = projects[who], scratch / f"cache-{who}"
            if cold:
                number = next(copies)
                project = Path(shutil.copytree(source, scratch / f"cold-{number}", symlinks=True))
                cache = scratch / f"cache-cold-{number}"
            line, extra = krc_of(trees[who])
            return bench_scale.measure(line + command.split(), project, {**base, **extra, "KRC_CACHE_DIR": str(cache)})

        timing.settle_removals(scratch, started)  # what ran before may have removed thousands of files
        print(f"krc at {args.revision} (old) against this checkout (new), N={args.n}, {os.cpu_count()} cores")
        for command in filter(None, args.commands.split(",")):
            runs: dict[str, list[bench_scale.Run]] = {"old": [], "new": []}
            for _ in range(args.rounds):
                for who in ("old", "new"):
                    runs[who].append(run(who, command, cold=True))
            report(f"{command} cold", runs)
        runs = {"old": [], "new": []}
        for who in ("old", "new"):
            run(who, "render", cold=False)  # warm, and rendered/ holds its own result
        for number in range(args.rounds + 1):
            for who in ("old", "new"):
                synthetic.touch_one(projects[who], 1, number)
                runs[who].append(run(who, "render", cold=False))
        report("render one changed", runs)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
