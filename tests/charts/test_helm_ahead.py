"""`helm template` started ahead: while a batch of environments renders, Helm renders their charts on threads
(helm_template.start_ahead); the files are those Helm run in turn gives, and a run that fails ahead is run again
where it is needed, so its error is the one it always was."""
from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from compiler import output, pipeline
from compiler.charts import helm_template, vendored
from compiler.charts.helm_pin import read_helm_pin
from compiler.pipeline import jobs as jobs_module
from compiler.problems import KrcError
from compiler.project import Project

SEQUENTIAL = pipeline.RunOptions(cache=False, workers=1)


def _recorded_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The thread each real `helm template` run happens on."""
    threads: list[str] = []
    real = helm_template._run_helm

    def run(*args: Any) -> str:
        threads.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(helm_template, "_run_helm", run)
    return threads


def test_a_batch_renders_its_charts_ahead_with_the_same_files(project_without_policies: Project,
                                                               private_cache: Path,
                                                               monkeypatch: pytest.MonkeyPatch):
    project = project_without_policies
    names = project.environment_names()
    assert len(names) == 2  # one batch of two: Helm starts for both before the first one needs its chart
    shutil.rmtree(private_cache / helm_template.CACHE_FOLDER)
    threads = _recorded_runs(monkeypatch)
    pipeline.render_to_disk(project, names, SEQUENTIAL)
    assert len(threads) == 2 and all(name.startswith("krc-helm") for name in threads)
    ahead = output.read_tree(project.rendered_dir)

    shutil.rmtree(private_cache / helm_template.CACHE_FOLDER)
    threads.clear()
    for name in names:  # one at a time: no batch, so Helm runs where each chart is needed
        pipeline.render_to_disk(project, [name], SEQUENTIAL)
    assert threads == [threading.current_thread().name] * 2
    assert output.read_tree(project.rendered_dir) == ahead


def test_a_run_that_fails_ahead_is_run_again_where_it_is_needed(project_without_policies: Project,
                                                                 private_cache: Path,
                                                                 monkeypatch: pytest.MonkeyPatch):
    project = project_without_policies
    shutil.rmtree(private_cache / helm_template.CACHE_FOLDER)
    real = helm_template._run_helm
    main = threading.current_thread().name

    def fails_ahead(*args: Any) -> str:
        if threading.current_thread().name != main:
            raise KrcError("helm template failed ahead")
        return real(*args)

    monkeypatch.setattr(helm_template, "_run_helm", fails_ahead)
    results = pipeline.render_to_disk(project, project.environment_names(), SEQUENTIAL)
    assert len(results) == 2
    assert sorted(p.name for p in (private_cache / helm_template.CACHE_FOLDER).iterdir()) != []


def test_no_helm_ahead_where_worker_processes_take_every_core(project_without_policies: Project,
                                                              private_cache: Path,
                                                              monkeypatch: pytest.MonkeyPatch):
    """A pool with a process on every core gives Helm ahead no lane (jobs.parallel: there it only competes), and
    gives the lanes back once the pool is gone; without a lane nothing starts ahead."""
    project = project_without_policies
    lanes: list[int] = []
    real = jobs_module.use_ahead_lanes
    monkeypatch.setattr(jobs_module, "use_ahead_lanes", lambda n: (lanes.append(n), real(n)))
    monkeypatch.setattr(jobs_module.os, "cpu_count", lambda: 2)
    pipeline.render_to_disk(project, project.environment_names(), pipeline.RunOptions(cache=False, workers=2,
                                                                                          repaid_by=1))
    assert lanes == [0, helm_template.AHEAD_LANES]  # this process, during and after its pool

    shutil.rmtree(private_cache / helm_template.CACHE_FOLDER)
    pin = read_helm_pin(project.vendor_dir / vendored.LOCK_NAME)
    digest = vendored.read_lock(project.vendor_dir)[("kuberay-operator", "1.6.2")]
    request = helm_template.TemplateRequest(vendored.archive_path(project.vendor_dir, "kuberay-operator", "1.6.2"),
                                            digest, "kuberay-operator", "ray-ops", "1.33", {})
    running = dict(helm_template._AHEAD.running)  # what earlier tests of this process may have left
    try:
        helm_template.use_ahead_lanes(0)
        helm_template.start_ahead(pin, [request])
        assert request.cache_key(pin.version) not in {key for key, _, _ in helm_template._AHEAD.queue}
        assert helm_template._AHEAD.running == running
    finally:
        helm_template.use_ahead_lanes(helm_template.AHEAD_LANES)
