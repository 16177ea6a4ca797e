"""A chart's CRDs sent to the engine ahead (charts.crds_ahead): compiled while the environment renders, then
named by digest by the validation instead of sent again; the verdicts are the ones a CRD sent with its objects
gets."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from compiler.charts import crds_ahead, vendored
from compiler.environment.model import merged_settings
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
    expected = {(os.getpid(), crd.digest) for crd in context.chart(*_pinned(project, env)).crds}
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


def test_the_command_line_starts_the_engine_ahead_for_a_few_edited_files(project: Project, private_cache: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the modules that compile load, a command over environments starts the engine and sends it the CRDs
    the edited environments' charts pin (pipeline.engine_ahead), when their files' signatures against the memo
    show a few edited, as Context.of finds them later; Context.of then finds it running."""
    from compiler.pipeline import engine_ahead
    from compiler.pipeline.context import Context

    run, dev = _after_a_command_dev_edited(project, monkeypatch)
    monkeypatch.setattr(client, "_KNOWN", {})
    monkeypatch.setattr(crds_ahead, "_AHEAD", {})
    engine_ahead.start_engine_ahead(project, (), run, roomy=True)
    engine = client._ENGINE
    assert engine is not None and engine.alive()
    assert "--collect-late" in _engine_arguments() and "GOGC=200" in _engine_environment()
    chart = vendored.load_vendored_chart(project.vendor_dir, *_pinned(project, "dev"))
    assert set(crds_ahead._AHEAD) == {(os.getpid(), crd.digest) for crd in chart.crds}
    Context.of(project, run)
    assert client._ENGINE is engine
    client.close_engine()
    dev.write_text(dev.read_text() + "\n# changed again\n")
    engine_ahead.start_engine_ahead(project, ("dev",), run, roomy=False)  # the command's own choice of collector
    assert "GOGC=100" in _engine_environment()


def test_no_engine_is_started_ahead_unless_a_few_environment_files_were_edited(
        project: Project, private_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing is started ahead for arguments that are not all environments (`krc lint` of files), without the
    cache, for more edited files than a few (a run that starts its workers first), or with nothing edited."""
    from compiler.pipeline import RunOptions, engine_ahead
    from compiler.pipeline.context import Context

    run, _ = _after_a_command_dev_edited(project, monkeypatch)
    engine_ahead.start_engine_ahead(project, ("dev", "rendered/dev/manifests"), run, roomy=False)
    engine_ahead.start_engine_ahead(project, (), RunOptions(cache=False, workers=1), roomy=False)
    monkeypatch.setattr(engine_ahead, "CHARTS_AHEAD_FOR", 0)
    engine_ahead.start_engine_ahead(project, (), run, roomy=False)
    assert client._ENGINE is None
    monkeypatch.undo()
    later = time.time_ns() + 3_000_000_000
    monkeypatch.setattr(input_digests.time, "time_ns", lambda: later)
    Context.of(project, run)  # a command read the edited file: its memo has it
    client.close_engine()
    monkeypatch.setattr(crds_ahead, "_AHEAD", {})
    engine_ahead.start_engine_ahead(project, (), run, roomy=False)
    assert client._ENGINE is None and crds_ahead._AHEAD == {}


def test_the_engine_is_started_before_the_pipeline_loads(project: Project, private_cache: Path) -> None:
    """`krc render` starts the engine ahead before the modules of its pipeline function load (so they load while
    the engine comes up), then renders as always."""
    code = """
import sys
import compiler.pipeline as pipeline
from compiler.pipeline import engine_ahead
seen = []
def ahead(*args, **kwargs):
    seen.append("compiler.pipeline.golden" in sys.modules)
    return engine_ahead.start_engine_ahead(*args, **kwargs)
pipeline.start_engine_ahead = ahead
from click.testing import CliRunner
from compiler.cli import main
result = CliRunner().invoke(main, sys.argv[1:])
print(result.exit_code, seen)
"""
    done = subprocess.run([sys.executable, "-c", code, "--project", str(project.root), "render", "dev"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.split(maxsplit=1) == ["0", "[False]\n"]
    assert (project.root / "rendered" / "dev" / "manifests").is_dir()


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


def _engine_environment() -> list[str]:
    engine = client._ENGINE
    assert isinstance(engine, client.EngineProcess)
    return Path(f"/proc/{engine._process.pid}/environ").read_text().split("\0")


def _pinned(project: Project, name: str) -> tuple[str, str]:
    chart = merged_settings(project, name, frozenset({"operator"}))[0]["operator"]["chart"]
    return str(chart["name"]), str(chart["version"])
    client.close_engine()
