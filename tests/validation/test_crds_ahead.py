"""A chart's CRDs sent to the engine ahead (charts.crds_ahead): compiled while the environment renders, then
named by digest by the validation instead of sent again; the verdicts are the ones a CRD sent with its objects
gets."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from compiler.charts import crds_ahead, vendored
from compiler.native import client
from compiler.project.paths import Project
from compiler.results import input_digests
from compiler.validation import SchemaSet

if TYPE_CHECKING:
    from compiler.pipeline import RunOptions

CLUSTER = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "c", "namespace": "n"},
           "spec": {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [
               {"name": "ray-head", "image": "rayproject/ray:2.46.0", "ports": [{"containerPort": "x"}]}]}}}}}


def test_crds_sent_ahead_are_named_by_digest_and_judge_as_before(project: Project,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    chart = vendored.load_vendored_chart(project.vendor_dir, "kuberay-operator", "1.7.0")
    monkeypatch.setattr(client, "_KNOWN", {})  # nothing sent before, as in a new process
    monkeypatch.setattr(crds_ahead, "_AHEAD", {})
    schemas = SchemaSet.from_crds(chart.crds)
    sent_with_objects = schemas.validate(CLUSTER)

    monkeypatch.setattr(client, "_KNOWN", {})
    crds_ahead.send(chart.crds)
    crds_ahead.send(chart.crds)  # once per CRD and process
    assert len(crds_ahead._AHEAD) == len(chart.crds)
    deadline = time.monotonic() + 60
    while not all(p.done() for p in crds_ahead._AHEAD.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    asked: list[dict[str, Any]] = []
    real = client.Pending

    def recording(op: str, args: dict[str, Any], what: str, timeout: float) -> client.Pending:
        asked.append(args)
        return real(op, args, what, timeout)

    monkeypatch.setattr(client, "Pending", recording)
    ahead = schemas.validate(CLUSTER)
    assert [sorted(a) for a in asked] == [["crdDigest", "objects", "share"]]  # named, not sent again
    assert ahead == sent_with_objects and not ahead.ok
    assert any("containerPort" in str(p.segments) for p in ahead.problems)


def test_a_crd_sent_ahead_is_named_by_digest_before_its_answer_is_in(project: Project,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine names a CRD by the sha256 of the bytes sent, so the validation right after the send names it
    too (never sending megabytes twice), whether or not the engine finished compiling it."""
    chart = vendored.load_vendored_chart(project.vendor_dir, "kuberay-operator", "1.7.0")
    monkeypatch.setattr(client, "_KNOWN", {})
    monkeypatch.setattr(crds_ahead, "_AHEAD", {})
    schemas = SchemaSet.from_crds(chart.crds)
    sent_with_objects = schemas.validate(CLUSTER)

    monkeypatch.setattr(client, "_KNOWN", {})
    monkeypatch.setattr(crds_ahead, "_AHEAD", {})
    asked: list[dict[str, Any]] = []
    real = client.Pending

    def recording(op: str, args: dict[str, Any], what: str, timeout: float) -> client.Pending:
        asked.append(args)
        return real(op, args, what, timeout)

    monkeypatch.setattr(client, "Pending", recording)
    crds_ahead.send(chart.crds)
    sent_ahead = list(crds_ahead._AHEAD.values())
    ahead = schemas.validate(CLUSTER)  # at once: its CRD's compile may well be under way
    validations = [a for a in asked if a.get("objects")]
    assert [sorted(a) for a in validations] == [["crdDigest", "objects", "share"]]
    assert ahead == sent_with_objects
    assert all(p.answer().error is None for p in sent_ahead)
    [cluster_crd] = [c for c in chart.crds if c.kind == "RayCluster"]
    assert validations[0]["crdDigest"] == crds_ahead.engine_name(cluster_crd.digest)
    # what the engine answered for each is the name used
    answered = {a["crdDigest"] for a in (p.answer().result for p in sent_ahead)}
    assert answered == {crds_ahead.engine_name(c.digest) for c in chart.crds}


def test_the_charts_of_the_few_environments_to_compile_are_sent_ahead(project: Project,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that finds a few environments missing from the compile cache sends their charts' CRDs to the
    engine before its jobs run (pipeline.context.charts_ahead); with none missing, or more than a few (whose
    workers read every chart first), it sends nothing."""
    from compiler.pipeline import context as pipeline_context
    from compiler.pipeline.context import Context, charts_ahead
    from compiler.results.compile_cache import CompileCache

    monkeypatch.setattr(client, "_KNOWN", {})
    monkeypatch.setattr(crds_ahead, "_AHEAD", {})
    names = project.environment_names()
    context = Context(project, CompileCache(project, enabled=False))  # no entries: every environment is missing
    charts_ahead(context, names[:1])
    [env] = names[:1]
    pin = pipeline_context.merged_settings(project, env, frozenset({"operator"}))[0]["operator"]["chart"]
    expected = {(os.getpid(), crd.digest) for crd in context.chart(pin["name"], str(pin["version"])).crds}
    assert set(crds_ahead._AHEAD) == expected

    monkeypatch.setattr(crds_ahead, "_AHEAD", {})
    monkeypatch.setattr(client, "_KNOWN", {})
    charts_ahead(context, names[:1])  # decided once per command: the same command's jobs ask again
    assert crds_ahead._AHEAD == {}

    monkeypatch.setattr(pipeline_context, "CHARTS_AHEAD_FOR", 0)
    charts_ahead(Context(project, CompileCache(project, enabled=False)), names[:1])  # more missing than the few
    assert crds_ahead._AHEAD == {}  # left to the workers


def test_the_engine_starts_with_the_command_when_an_environment_file_changed(project: Project, private_cache: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that finds an environment file changed since the last run (it will compile) starts the engine
    while it reads the destinations, and sends it the CRDs of the chart that file pins right then (before
    charts_ahead asks the cache about every environment); one that finds nothing changed starts none."""
    from compiler.pipeline import RunOptions
    from compiler.pipeline import context as pipeline_context
    from compiler.pipeline.context import Context

    run = RunOptions(cache=True, workers=1)
    later = time.time_ns() + 3_000_000_000  # the files were written seconds before (their signatures are kept)
    monkeypatch.setattr(input_digests.time, "time_ns", lambda: later)
    Context.of(project, run)  # the destinations read once: the index knows every environment file
    client.close_engine()
    monkeypatch.setattr(client, "_KNOWN", {})
    monkeypatch.setattr(crds_ahead, "_AHEAD", {})
    Context.of(project, run)
    assert client._ENGINE is None and crds_ahead._AHEAD == {}  # nothing changed: no engine, nothing sent
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text() + "\n# changed\n")
    context = Context.of(project, run)
    assert client._ENGINE is not None and client._ENGINE.alive()
    chart = context.chart(*_pinned(project, "dev"))  # the chart the changed file pins
    assert set(crds_ahead._AHEAD) == {(os.getpid(), crd.digest) for crd in chart.crds}
    assert not context.charts_ahead_done  # charts_ahead still decides for the environments the cache lacks
    assert "--collect-late" in _engine_arguments()  # a few to compile: its collector waits for the soft limit

    client.close_engine()
    monkeypatch.setattr(pipeline_context, "CHARTS_AHEAD_FOR", 0)  # as if many files had changed
    dev.write_text(dev.read_text() + "\n# changed again\n")
    Context.of(project, run)
    assert "--collect-late" not in _engine_arguments()


def test_a_few_edited_files_under_a_changed_template_are_not_a_few_compiles(
        project: Project, private_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One environment file edited together with a template: every environment compiles, so the engine is not
    started collecting late (the memo's basis, the shared digest of the last command, tells it)."""
    from compiler.pipeline.context import Context

    run, dev = _after_a_command_dev_edited(project, monkeypatch)
    core = project.root / "templates" / "objects" / "core.jsonnet"
    core.write_text(core.read_text() + "\n// edited\n")
    Context.of(project, run)
    assert "--collect-late" not in _engine_arguments()
    client.close_engine()
    dev.write_text(dev.read_text() + "\n# changed again\n")  # the template as the last command saw it
    Context.of(project, run)
    assert "--collect-late" in _engine_arguments()


def test_a_few_edited_files_then_many_to_compile_has_the_engine_collect_as_usual(
        project: Project, private_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A few edited environment files start the engine collecting late; when the cache then lacks more
    environments than a few (a template changed too), charts_ahead tells it to collect as usual (engine/limits.go,
    its go test): the engine answers, and is not told twice."""
    from compiler.pipeline import context as pipeline_context
    from compiler.pipeline.context import Context, charts_ahead

    run, _ = _after_a_command_dev_edited(project, monkeypatch)
    context = Context.of(project, run)
    assert "--collect-late" in _engine_arguments()
    engine = client._ENGINE
    assert isinstance(engine, client.EngineProcess) and engine.collecting_late
    told = []
    collect_as_usual = client.collect_as_usual
    monkeypatch.setattr(client, "collect_as_usual", lambda: told.append(collect_as_usual()))
    monkeypatch.setattr(pipeline_context, "CHARTS_AHEAD_FOR", 0)  # the cache lacks more than a few
    charts_ahead(context, project.environment_names())
    assert len(told) == 1 and told[0] is not None
    assert told[0].result(timeout=30).error is None
    assert not engine.collecting_late and collect_as_usual() is None


def _after_a_command_dev_edited(project: Project, monkeypatch: pytest.MonkeyPatch) -> tuple[RunOptions, Path]:
    """A command ran (its memo kept, its engine closed), then environments/dev.yaml was edited: the run options
    to go on with, and that file."""
    from compiler.pipeline import RunOptions
    from compiler.pipeline.context import Context

    run = RunOptions(cache=True, workers=1)
    later = time.time_ns() + 3_000_000_000  # the files were written seconds before (their signatures are kept)
    monkeypatch.setattr(input_digests.time, "time_ns", lambda: later)
    Context.of(project, run)
    client.close_engine()
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text() + "\n# changed\n")
    return run, dev


def _engine_arguments() -> list[str]:
    engine = client._ENGINE
    assert isinstance(engine, client.EngineProcess)
    return Path(f"/proc/{engine._process.pid}/cmdline").read_text().split("\0")


def _pinned(project: Project, name: str) -> tuple[str, str]:
    from compiler.pipeline import context as pipeline_context

    chart = pipeline_context.merged_settings(project, name, frozenset({"operator"}))[0]["operator"]["chart"]
    return str(chart["name"]), str(chart["version"])
    client.close_engine()
