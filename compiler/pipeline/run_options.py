"""How a command works through many environments (`--no-cache`, `--jobs`, batch sizes): a module of its own, light
to import, because the CLI builds these options for every command, the plugin's `generate` included."""
from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..cache.digests import path_digest
from ..diagnostics.problems import KrcError
from ..settings import variables
from .work import Work

# Environments per `krc lint` / `krc policy` job, and so per policy request to the engine (CUE inside krc-engine;
# each environment is unified with each policy on its own, so batching changes no finding). A job's renders,
# validations and findings are held until it ends, in its process and in the engine's requests under way: at N=500
# jobs of 10 took the run's peak from about 405 MB to 390 MB against jobs of 25, in the same time.
POLICY_BATCH = 10
# Environments per `krc render`, `krc golden` and `krc check` job: a job's environments are rendered together
# (prepare_templates: one Jsonnet run for all of them). Small, because the Jsonnet run's memory grows with its
# batch, while parsing the templates once per 5 environments instead of once per 25 costs no measurable CPU
# (bench/bench_scale.py measures both).
RENDER_BATCH = 5
# Environments per `krc diff` job: Ray's autoscaler view of a job's environments comes from one generator process.
REVIEW_BATCH = 40
# How many environments to compile repay one more worker process, by command. A worker starts fresh (spawn:
# importing krc and reading the parsed CRDs), so for a few environments one process finishes as soon, with less
# CPU and memory; the shares are where two processes started to win on 2 cores (bench/bench_scale.py's
# "N changed" runs measure them).
WORKER_REPAID_BY = {Work.RENDER: 12, Work.GOLDEN: 12, Work.CHECK: 12, Work.REVIEW: 16, Work.LINT: 10}
# Up to this many environments to compile (a pull request's few), the CRDs of the charts they pin are sent to the
# engine as soon as a command knows which (pinned_crds): a run compiling more has its workers read every chart
# first (workers_ahead.load_charts), and a run compiling none needs no engine.
CHARTS_AHEAD_FOR = 8
# Without workers, a few environments to lint spread over several jobs (at most this many) leave their policies
# to the end of the run (policies_after), shared by the two engines (8 of 500 changed: 5.0-5.2 -> 3.9 s); more
# would wait long for their findings
SHARED_AT_MOST = 10
# The default number of compiling processes when --jobs is not given: a container's CPU limit, which
# os.cpu_count() does not see (an Argo CD sidecar, a CI runner), or 1 where the caller already runs in parallel.
JOBS_VARIABLE = "KRC_JOBS"


def default_workers() -> int:
    """$KRC_JOBS when set (a positive whole number), else one process per core."""
    raw = variables.value(JOBS_VARIABLE)
    if not raw:
        return os.cpu_count() or 1
    if not raw.isdigit() or int(raw) < 1:
        raise KrcError(f"{JOBS_VARIABLE}={raw!r} is not a positive whole number; unset it or give a number")
    return int(raw)


@dataclass(frozen=True)
class RunOptions:
    """How a command works through environments: the compile cache (`--no-cache` turns it off), how many
    processes compile in parallel at most (`--jobs`; None: $KRC_JOBS, else one per core) and for how many
    environments to compile a worker is started, and the most environments one job takes for policies and for
    `krc diff`. Output is the same whatever they are."""

    cache: bool = True
    workers: int | None = None
    policy_batch: int = POLICY_BATCH
    review_batch: int = REVIEW_BATCH
    repaid_by: int | None = None  # environments to compile per process (None: WORKER_REPAID_BY's)

    def worker_count(self) -> int:
        return max(1, self.workers if self.workers is not None else default_workers())

    def workers_for(self, work: Work, to_compile: int) -> int:
        """How many processes compile `to_compile` environments: one for each share (or part of one) that repays a
        worker's start, at most worker_count()."""
        share = max(1, self.repaid_by if self.repaid_by is not None else WORKER_REPAID_BY.get(work, 1))
        return max(1, min(self.worker_count(), math.ceil(to_compile / share)))

    def batches(self, names: Sequence[str], most: int) -> list[tuple[str, ...]]:
        """`names` in consecutive jobs of at most `most`, spread so every worker gets some."""
        size = max(1, min(most, math.ceil(len(names) / self.worker_count())))
        return [tuple(names[i:i + size]) for i in range(0, len(names), size)]


DEFAULT_RUN = RunOptions()


def argocd_crds_option(argocd_crds: str | None) -> str:
    """What an explicit --argocd-crds adds to the cache key: its path and content."""
    if not argocd_crds:
        return ""
    path = Path(argocd_crds).resolve()
    return f"argocd-crds={path}:{path_digest(path)}"
