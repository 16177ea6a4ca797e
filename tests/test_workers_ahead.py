"""Worker processes spawned before the environments' destinations are read, and jobs taken as processes come free."""
from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from project_support import copy_environment

from compiler import pipeline
from compiler.charts import crds_ahead, package, vendored
from compiler.native import client
from compiler.output import folders
from compiler.pipeline import jobs as jobs_module
from compiler.pipeline import workers_ahead
from compiler.project.paths import Project

POOLED = pipeline.RunOptions(cache=True, workers=2, repaid_by=1)


def test_a_cold_run_takes_the_workers_started_before_it_read_the_destinations(project: Project,
                                                                              private_cache: Path,
                                                                              monkeypatch: pytest.MonkeyPatch):
    copy_environment(project, "dev")
    names = project.environment_names()
    taken: list[bool] = []
    real_take = workers_ahead.take

    def take(count: int) -> Any:
        pool = real_take(count)
        taken.append(pool is not None)
        return pool

    monkeypatch.setattr(workers_ahead, "take", take)
    pooled = [(w.name, w.objects) for w in pipeline.render_to_disk(project, names, POOLED)]
    tree = folders.read_tree(project.root / "rendered")
    assert taken == [True]  # started ahead (the cache was cold), then taken by the jobs
    assert not workers_ahead._STARTED
    # the same output as one process gives; a warm run reads its destinations from the cache: nothing ahead
    sequential = pipeline.render_to_disk(project, names, pipeline.RunOptions(cache=False, workers=1))
    assert [(w.name, w.objects) for w in sequential] == pooled
    assert folders.read_tree(project.root / "rendered") == tree
    taken.clear()
    started: list[int] = []
    monkeypatch.setattr(workers_ahead, "start", lambda count, setup, vendor: started.append(count))
    pipeline.render_to_disk(project, names, POOLED)
    assert started == []


def test_a_worker_started_ahead_reads_the_charts_and_sends_their_crds_first(project: Project, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch):
    """What the worker does while the main process reads the destinations: every vendored chart read (the CRD
    facts written to an empty cache, so the main process does not parse them too), its CRDs sent to the engine to
    compile; a chart that does not load is left to the environments that pin it."""
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(package, "_READ", {})  # nothing read in this process yet
    locked = vendored.read_lock(project.vendor_dir)
    assert locked
    archives = {key: vendored.archive_path(project.vendor_dir, *key) for key in locked}
    assert all(package.CRD_CACHE.read_json(hashlib.sha256(a.read_bytes()).hexdigest()) is None
               for a in archives.values())
    workers_ahead.load_charts(project.vendor_dir)
    for archive in archives.values():
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        assert package.CRD_CACHE.read_json(digest) is not None  # the facts, for the other processes
        chart = package._READ[digest]  # held for this process's jobs
        assert chart.crds
        assert all((os.getpid(), crd.digest) in crds_ahead._AHEAD or client.engine_name("crd", crd.digest)
                   for crd in chart.crds)
    broken = tmp_path / "broken-vendor"
    shutil.copytree(project.vendor_dir, broken)
    first = vendored.archive_path(broken, *sorted(locked)[0])
    first.write_bytes(b"not a chart")
    workers_ahead.load_charts(broken)  # its digest does not match: nothing raised, nothing read
    workers_ahead.load_charts(tmp_path / "no-vendor")


def test_a_pool_nobody_takes_is_shut_down():
    workers_ahead.start(1, workers_ahead.worker_setup)
    pool = workers_ahead._STARTED[0][0]
    assert workers_ahead.take(2) is None  # another size than the run wants: shut down
    assert not workers_ahead._STARTED
    with pytest.raises(RuntimeError):
        pool.submit(print)  # "cannot schedule new futures after shutdown"
    workers_ahead.start(1, workers_ahead.worker_setup)
    workers_ahead.discard()
    assert not workers_ahead._STARTED


def test_jobs_go_to_whichever_process_is_free_and_come_back_in_order():
    """A worker that starts late (or draws slow jobs) leaves more jobs to this process, which takes the cache hits
    first and then heavy jobs from the back; every outcome is given in job order."""
    jobs: list[Any] = [f"job{i}" for i in range(10)]
    light, heavy = [0, 5], [1, 2, 3, 4, 6, 7, 8, 9]
    ran_here: list[str] = []
    worker_started = threading.Event()

    def in_worker(job: str) -> str:
        worker_started.wait(5)
        time.sleep(0.05)
        return f"{job} by the worker"

    def here(job: str) -> Any:
        ran_here.append(job)
        if len(ran_here) == 3:
            worker_started.set()  # the worker begins only now: this process has taken three jobs meanwhile
        return f"{job} here"

    with ThreadPoolExecutor(max_workers=1) as pool:
        def submit(job: str) -> Future[str]:
            return pool.submit(in_worker, job)

        out = list(jobs_module._shared(jobs, light, heavy, submit, here))  # type: ignore[arg-type]
    assert [o.split()[0] for o in out] == jobs
    assert ran_here[:3] == ["job0", "job5", "job9"]  # the cache hits, then the last heavy job
    assert {o for o in out if o.endswith("here")} == {f"{j} here" for j in ran_here}
    assert 3 <= len(ran_here) < len(jobs)  # both did some
    assert "job1 by the worker" in out  # the worker took from the front


def test_this_process_takes_back_the_jobs_no_worker_has_started_rather_than_wait():
    """Every heavy job goes to the workers at once; this process, free while a worker is still on its first job,
    takes the others back from the end (their calls cancelled) instead of waiting for the worker to do them."""
    jobs: list[Any] = [f"job{i}" for i in range(4)]
    ran_here: list[str] = []
    worker_may_end = threading.Event()

    def in_worker(job: str) -> str:
        worker_may_end.wait(5)
        return f"{job} by the worker"

    def here(job: str) -> Any:
        ran_here.append(job)
        if len(ran_here) == 3:
            worker_may_end.set()
        return f"{job} here"

    with ThreadPoolExecutor(max_workers=1) as pool:
        out = list(jobs_module._shared(jobs, [], [0, 1, 2, 3], lambda job: pool.submit(in_worker, job), here))
    assert ran_here == ["job3", "job2", "job1"]
    assert out == ["job0 by the worker", "job1 here", "job2 here", "job3 here"]


def test_the_command_and_its_workers_collect_cycles_less_often() -> None:
    import gc
    import subprocess
    import sys

    from compiler.settings import collector

    before = gc.get_threshold()
    try:
        workers_ahead.worker_setup()
        assert gc.get_threshold() == collector.THRESHOLDS
    finally:
        gc.set_threshold(*before)
    code = ("import atexit, gc, sys\natexit.register(lambda: print(gc.get_threshold()))\n"
            "from compiler.cli import run\nsys.argv = ['krc', '--help']\nrun()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stdout.strip().splitlines()[-1] == str(collector.THRESHOLDS)


def test_workers_start_with_the_go_runtime_settings_krc_chose_for_gojsonnet(monkeypatch: pytest.MonkeyPatch):
    """The Go runtime inside gojsonnet reads GOGC and GOMEMLIMIT when its process starts: a worker gets krc's
    (collector.go_runtime_for_workers), a value set in krc's own environment is kept, and neither stays in this
    process's environment, which the engine and other helpers are started from."""
    from compiler.settings import collector, limits

    monkeypatch.delenv("GOGC", raising=False)
    monkeypatch.delenv("GOMEMLIMIT", raising=False)
    workers_ahead.start(1, workers_ahead.worker_setup)
    pool = workers_ahead.take(1)
    assert pool is not None
    with pool:
        assert pool.submit(os.getenv, "GOGC").result() == collector.WORKER_GOGC == "200"
        assert pool.submit(os.getenv, "GOMEMLIMIT").result() == f"{limits.JSONNET_MEMORY_MB.value}MiB"
    assert "GOGC" not in os.environ and "GOMEMLIMIT" not in os.environ
    monkeypatch.setenv("GOGC", "150")
    monkeypatch.setenv("KRC_JSONNET_MEMORY_MB", "300")
    workers_ahead.start(1, workers_ahead.worker_setup)
    pool = workers_ahead.take(1)
    assert pool is not None
    with pool:
        assert pool.submit(os.getenv, "GOGC").result() == "150"
        assert pool.submit(os.getenv, "GOMEMLIMIT").result() == "300MiB"
    assert os.environ["GOGC"] == "150" and "GOMEMLIMIT" not in os.environ


def test_workers_of_a_command_that_leaves_them_room_collect_less_often(monkeypatch: pytest.MonkeyPatch):
    """Inside client.roomy_engine (render, golden, check and policy: no Ray generator beside their processes) a
    worker's gojsonnet collects at GOGC=400; inside client.collecting_at_limit (lint) and outside either, at 200."""
    from compiler.settings import collector

    monkeypatch.delenv("GOGC", raising=False)
    try:
        for inside, want in ((client.roomy_engine, collector.ROOMY_WORKER_GOGC),
                             (client.collecting_at_limit, collector.WORKER_GOGC),
                             (contextlib.nullcontext, collector.WORKER_GOGC)):
            with inside():
                workers_ahead.start(1, workers_ahead.worker_setup)
            pool = workers_ahead.take(1)
            assert pool is not None
            with pool:
                assert pool.submit(os.getenv, "GOGC").result() == want
            assert "GOGC" not in os.environ
    finally:
        client.close_engine()
    assert (collector.ROOMY_WORKER_GOGC, collector.WORKER_GOGC) == ("400", "200")


def test_the_command_process_holds_its_ballast_when_it_compiles_beside_workers(project: Project,
                                                                               private_cache: Path,
                                                                               monkeypatch: pytest.MonkeyPatch):
    """Beside workers, or alone with more than a few environments to compile, the command's own process holds
    collector.command_ballast_mb() for its gojsonnet (engines/jsonnet_ballast.py); alone with a few, none."""
    copy_environment(project, "dev")
    names = project.environment_names()
    held: list[int] = []
    monkeypatch.setattr(jobs_module.jsonnet_ballast, "hold", held.append)
    monkeypatch.delenv("GOGC", raising=False)
    alone = pipeline.RunOptions(cache=True, workers=1)
    pipeline.render_to_disk(project, names, alone)
    assert held == [] and 1 < len(names) <= jobs_module.CHARTS_AHEAD_FOR
    shutil.rmtree(private_cache / "compiled")
    pipeline.render_to_disk(project, names, POOLED)
    assert held == [4]
    held.clear()
    monkeypatch.setattr(jobs_module, "CHARTS_AHEAD_FOR", 1)  # a render compiles a few ahead of its jobs: lint
    shutil.rmtree(private_cache / "compiled")
    pipeline.lint_environments(project, names, run=alone)
    assert held == [4]
