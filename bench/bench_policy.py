"""How `krc policy` scales: the shipped environments vs 50 synthetic ones, all in one engine request (CUE
v0.17 inside krc-engine: engine/policy.go).

Baseline, measured in the same run: starting the engine and asking it for its versions. The policy step's
marginal cost per environment is what CUE spends on it.
Run: .venv/bin/python bench/bench_policy.py   (needs the engine, i.e. `make engine`, and vendored charts)
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from timing import best_of  # bench/timing.py, beside this script

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from compiler.native import client  # noqa: E402
from compiler.pipeline import compile_environments, vendor_charts  # noqa: E402
from compiler.policy import evaluate_policies, policy_input  # noqa: E402
from compiler.policy.engine import CueEngine, find_engine  # noqa: E402
from compiler.project.paths import Project  # noqa: E402

KRC = [sys.executable, "-c", "from compiler.cli import main; main()"]
SYNTHETIC = 50
REPEATS = 3


def best(action: Callable[[], object]) -> float:
    return best_of(REPEATS, action)


def project_copy(root: Path) -> Project:
    for part in ("environments", "templates", "policies"):
        shutil.copytree(REPO / part, root / part)
    if (REPO / "vendor" / "charts").is_dir():
        shutil.copytree(REPO / "vendor", root / "vendor")
    project = Project(root)
    vendor_charts(project, project.environment_names())  # only downloads what the copy lacks
    return project


def add_synthetic_environments(project: Project, count: int) -> None:
    """count environments, alternating copies of the shipped ones, each with its own name and namespace."""
    shipped = project.environment_names()
    for i in range(count):
        source = project.environment_file(shipped[i % len(shipped)]).read_text(encoding="utf-8")
        project.environment_file(f"synthetic-{i:02d}").write_text(source, encoding="utf-8")


def krc_policy(project: Project) -> None:
    done = subprocess.run([*KRC, "--project", str(project.root), "policy"], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    if done.returncode != 0:
        raise SystemExit(f"krc policy failed ({done.returncode}):\n{done.stdout}{done.stderr}")


def policies_only(project: Project, engine: CueEngine) -> float:
    """The policy step alone (one engine run), on environments compiled beforehand."""
    inputs = [policy_input(r) for r in compile_environments(project, project.environment_names(), lint=False)]
    return best(lambda: evaluate_policies(project.policies_dir, inputs, engine=engine))


def main() -> None:
    engine = find_engine()
    with tempfile.TemporaryDirectory(prefix="krc-bench-policy-") as tmp:
        def fresh_engine() -> None:
            client.close_engine()
            client.call("version", {}, what="the engine's versions", timeout=60)

        baseline = best(fresh_engine)
        shipped = project_copy(Path(tmp) / "shipped")
        many = project_copy(Path(tmp) / "many")
        add_synthetic_environments(many, SYNTHETIC)
        n_shipped, n_many = len(shipped.environment_names()), len(many.environment_names())
        t_shipped = best(lambda: krc_policy(shipped))
        t_many = best(lambda: krc_policy(many))
        e_shipped, e_many = policies_only(shipped, engine), policies_only(many, engine)

    marginal = (t_many - t_shipped) / (n_many - n_shipped)
    print(f"engine: {engine.description}")
    print(f"baseline  engine start (version op)           {baseline:7.3f} s")
    print(f"krc policy, {n_shipped:3d} shipped environments        {t_shipped:7.3f} s "
          f" = {t_shipped / baseline:5.2f} x baseline")
    print(f"krc policy, {n_many:3d} environments (+{SYNTHETIC} synthetic) {t_many:7.3f} s "
          f" = {t_many / baseline:5.2f} x baseline")
    print(f"marginal cost per environment                {marginal * 1000:7.1f} ms"
          f" = {marginal / baseline:5.3f} x baseline")
    engine_marginal = (e_many - e_shipped) / (n_many - n_shipped)
    print(f"policy step only (one engine run), {n_shipped:3d} envs    {e_shipped:7.3f} s "
          f" = {e_shipped / baseline:5.2f} x baseline")
    print(f"policy step only (one engine run), {n_many:3d} envs    {e_many:7.3f} s "
          f" = {e_many / baseline:5.2f} x baseline")
    print(f"  engine marginal cost per environment       {engine_marginal * 1000:7.1f} ms = "
          f"{engine_marginal / baseline:5.3f} x baseline")
    print(f"one engine run per environment would cost    {n_many * baseline:7.3f} s  "
          f"(batching is {n_many * baseline / t_many:4.1f} x cheaper)")
    print(f"(each time is the best of {REPEATS} runs; krc policy includes Python start and compiling)")


if __name__ == "__main__":
    main()
