"""The engine process as krc runs it: answers by id to requests from several threads, a deadline per request, a
hard memory limit, and a crash that is krc's exit 3 with one line. The charts here are the tests' own, made in
the test (a template that loops or grows without end), rendered by the real engine."""
from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import tarfile
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from compiler.cli import main
from compiler.diagnostics.problems import KrcError
from compiler.native import client
from compiler.project.paths import Project
from compiler.settings import lifetime


def _chart(template: str) -> bytes:
    """A chart archive holding one template."""
    files = {"c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n", "c/templates/t.yaml": template}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _render_args(archive: bytes, **values: Any) -> dict[str, Any]:
    return {"archive": base64.b64encode(archive).decode(), "archiveSha256": hashlib.sha256(archive).hexdigest(),
            "release": "r", "namespace": "n", "kubeVersion": "1.33", "values": values}


@pytest.fixture(autouse=True)
def own_engine():
    """Each test starts and ends with no engine of this process running."""
    client.close_engine()
    yield
    client.close_engine()


def test_requests_from_several_threads_get_their_own_answers():
    archive = _chart("kind: ConfigMap\napiVersion: v1\nmetadata: {name: {{ .Values.name }}}\n")
    results: dict[int, str] = {}

    def ask(i: int) -> None:
        answer = client.call("render", _render_args(archive, name=f"n{i}"), what=f"render {i}", timeout=60)
        results[i] = answer["manifest"]

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == list(range(12))
    assert all(f"name: n{i}}}" in text for i, text in results.items())


def test_a_process_ending_with_its_command_lets_the_engine_go_when_the_command_is_done(
        monkeypatch: pytest.MonkeyPatch):
    """engine_done: the krc executable's engine is told to end as soon as the command asks nothing more of it (it
    exits while krc writes, and is reaped at the end); a later request starts another. A process running command
    after command (these tests) keeps its engine."""
    archive = _chart("kind: ConfigMap\napiVersion: v1\nmetadata: {name: {{ .Values.name }}}\n")
    client.call("render", _render_args(archive, name="a"), what="render a", timeout=60)
    engine = client._ENGINE
    assert isinstance(engine, client.EngineProcess)
    client.engine_done()
    assert client._ENGINE is engine and engine.alive()  # kept: this process runs more commands
    monkeypatch.setattr(lifetime, "_one_command", True)
    client.engine_done()
    assert engine._process.wait(timeout=30) == 0  # ended on its own, once told
    assert client.call("render", _render_args(archive, name="b"), what="render b", timeout=60)["manifest"]
    assert client._ENGINE is not engine
    client.close_engine()  # reaps the one let go and ends the new one
    assert not os.path.exists(engine.socket_folder)


def test_a_request_past_its_deadline_is_stopped_and_the_next_one_works():
    endless = _chart("{{ range until 2000000000 }}{{ end }}")
    with pytest.raises(KrcError) as raised:
        client.call("render", _render_args(endless), what="the endless chart", timeout=1)
    assert "the endless chart did not finish within 1 s and was stopped" in str(raised.value)
    assert client.call("version", {}, what="version", timeout=30)["helm.sh/helm/v4"] == "v4.2.1"


def test_the_engine_stops_at_its_memory_limit_and_krc_names_what_it_asked(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KRC_ENGINE_MEMORY_MB", "64")
    growing = _chart("{{ $s := \"xxxxxxxxxxxxxxxx\" }}{{ range until 40 }}{{ $s = print $s $s }}{{ end }}{{ $s }}")
    with pytest.raises(KrcError) as raised:
        client.call("render", _render_args(growing), what="the growing chart", timeout=60)
    text = str(raised.value)
    assert "the growing chart was stopped: the engine went over its memory limit" in text
    assert "KRC_ENGINE_MEMORY_MB" in text


def test_an_engine_that_crashes_is_an_internal_error_in_one_line(project: Project, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))  # nothing cached: the chart needs the engine
    monkeypatch.setenv("KRC_ENGINE", "/bin/false")  # a real program that ends at once, as a crashed engine does
    result = CliRunner().invoke(main, ["--project", str(project.root), "render", "dev"])
    assert result.exit_code == 3
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "the krc engine ended (exit 1)" in lines[0] and "Traceback" not in result.output
    assert not project.rendered_dir.exists()


def test_an_engine_that_is_not_built_says_how_to_build_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("KRC_ENGINE", str(tmp_path / "missing"))
    with pytest.raises(KrcError) as raised:
        client.call("version", {}, what="version", timeout=5)
    assert "is not an executable file" in str(raised.value)


def test_a_batch_larger_than_the_pipes_hold_is_answered_while_it_is_written():
    """Hundreds of requests submitted before any answer is taken (what a batch of environments does): the engine
    answers the first while the rest are still being written, and nothing waits on anything else."""
    archive = _chart("kind: ConfigMap\napiVersion: v1\nmetadata: {name: x}\ndata: {v: '{{ .Values.v }}'}\n")
    first = client.Pending("render", _render_args(archive, v="0"), "render 0", 60)
    args = _render_args(archive)
    del args["archive"]
    pending = [client.Pending("render", {**args, "values": {"v": "y" * 2000 + str(i)}}, f"render {i}", 60)
               for i in range(1, 600)]
    assert "v: '0'" in first.result()["manifest"]
    assert all(p.result()["manifest"].endswith(f"y{i}'}}\n") for i, p in enumerate(pending, 1))


def _engine_kind_in_a_worker() -> tuple[str, str]:
    """In a spawned worker: what serves its requests, and the Helm it reports."""
    version = client.call("version", {}, what="version", timeout=30)["helm.sh/helm/v4"]
    return type(client._engine()).__name__, version


def test_workers_share_the_engine_of_their_run():
    from compiler.pipeline.worker_pool import WorkerPool

    with client.shared_with_workers():
        owner = client._engine()
        with WorkerPool(1, _nothing) as pool:
            assert pool.submit(_engine_kind_in_a_worker).result() == ("EngineConnection", "v4.2.1")
        assert client._engine() is owner and owner.alive()  # the worker's leaving ended only its connection
    with WorkerPool(1, _nothing) as pool:  # outside: a worker starts its own
        assert pool.submit(_engine_kind_in_a_worker).result() == ("EngineProcess", "v4.2.1")


def _nothing() -> None:
    pass


def test_an_argument_already_encoded_goes_into_the_request_as_it_is():
    from compiler.native.channel import RawJSON, _encoded_args, _line

    fields = _encoded_args({"objects": [{"a": "é"}], "crd": RawJSON('{"kind":"CustomResourceDefinition"}')})
    assert json.loads(_line("validate", 7, fields)) == {
        "id": 7, "op": "validate", "args": {"objects": [{"a": "é"}], "crd": {"kind": "CustomResourceDefinition"}}}
    assert json.loads(_line("version", 1, _encoded_args({}))) == {"id": 1, "op": "version", "args": {}}
    text = '{"kind":"CustomResourceDefinition"}' * 1000
    assert RawJSON(text).text is text  # held, never copied: a CRD's megabytes per request under way


def test_submitting_never_waits_for_the_other_side_to_read_and_lines_go_out_in_order():
    """A request larger than the pipe holds is handed to the writer thread: the caller goes on (a chart's CRDs
    sent to an engine that has not started reading yet), and every line goes out whole, in the order submitted."""
    import os

    from compiler.native.channel import Channel

    requests_read, requests_write = os.pipe()
    answers_read, answers_write = os.pipe()
    channel = Channel(os.fdopen(requests_write, "wb"), os.fdopen(answers_read, "rb"))
    big = "x" * (4 << 20)  # far more than a pipe holds: before the writer thread, submit blocked here
    futures = [channel.submit("validate", {"crd": big, "n": i}) for i in range(3)]
    assert not any(f.done() for f in futures)  # nothing read them yet, and this thread was not held up
    with os.fdopen(requests_read, "rb") as other_side:
        lines = [json.loads(other_side.readline()) for _ in futures]
        assert [(line["id"], line["args"]["n"], len(line["args"]["crd"])) for line in lines] == \
            [(1, 0, 4 << 20), (2, 1, 4 << 20), (3, 2, 4 << 20)]
        assert channel.finish_writing(timeout=10)
        assert other_side.read() == b""  # closed after the last line
    os.close(answers_write)  # the reader thread sees the end: what was not answered fails
    with pytest.raises(client.EngineEnded):
        futures[0].result(timeout=10)


def test_answers_are_read_when_taken_and_an_answer_that_is_not_json_ends_nothing_else():
    """The reader thread only finds whose answer a line is; the value is read by whoever takes it (an answer taken
    later is held as its text). A line that starts like an answer but is not JSON is that request's failure; a
    line that is no answer at all ends the conversation."""
    import os

    from compiler.native.channel import Channel, EngineEnded

    requests_read, requests_write = os.pipe()
    answers_read, answers_write = os.pipe()
    channel = Channel(os.fdopen(requests_write, "wb"), os.fdopen(answers_read, "rb"))
    first, second, third = (channel.submit("version", {}) for _ in range(3))
    with os.fdopen(answers_write, "wb") as engine:
        engine.write(b'{"id":2,"result":{"a":[1,2]}}\n{"id":1,"error":"bad input"}\n')
        engine.flush()
        assert second.result(timeout=10).result == {"a": [1, 2]}
        assert first.result(timeout=10).error == "bad input" and first.result().result is None
        engine.write(b'{"id":3,"result":{"unfinished"\n')
        engine.flush()
        with pytest.raises(EngineEnded, match="did not ask"):
            third.result(timeout=10).result  # noqa: B018 - reading it is what fails
        fourth = channel.submit("version", {})
        engine.write(b"panic: runtime error\n")
    with pytest.raises(EngineEnded, match="did not ask"):
        fourth.result(timeout=10)
    os.close(requests_read)


def _engine_collector() -> tuple[str, str, bool]:
    """GOGC and GOMEMLIMIT as the engine this process started reads them, from the running engine's own
    environment once it has answered a request (an engine that has ended has none to read), and whether it keeps
    its soft limit at least twice its live heap (--collect-at-limit)."""
    client.call("collect", {}, what="a question to the engine", timeout=60)
    engine = client._ENGINE
    assert isinstance(engine, client.EngineProcess)
    fields = Path(f"/proc/{engine._process.pid}/environ").read_bytes().split(b"\0")
    environment = dict(f.decode().split("=", 1) for f in fields if b"=" in f)
    assert "GOGC" in environment, (engine.alive(), sorted(environment))
    arguments = Path(f"/proc/{engine._process.pid}/cmdline").read_bytes().split(b"\0")
    return environment["GOGC"], environment["GOMEMLIMIT"], b"--collect-at-limit" in arguments


@pytest.mark.parametrize(("command", "collector"), [("render", ("200", "192MiB", False)),
                                                     ("check", ("200", "192MiB", False)),
                                                     ("policy", ("200", "192MiB", False)),
                                                     ("lint --no-cache", ("off", "72MiB", True)),
                                                     ("lint", ("100", "192MiB", False)),
                                                     ("diff", ("100", "192MiB", False))])
def test_each_command_gives_the_engine_the_collector_its_other_processes_leave_room_for(
        project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str,
        collector: tuple[str, str, bool]):
    """render, golden, check and policy leave the engine room to grow to three times its live memory before it
    collects (client.roomy_engine); lint runs Ray's generator beside it and collects near a low soft limit, or
    twice its live heap (client.collecting_at_limit), unless it started its engine ahead for a few edited
    environments (nothing cached yet: every file is new to the memo), which collects late and then as usual; diff
    keeps Go's target."""
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))  # nothing cached: the command needs the engine
    client.close_engine()
    CliRunner().invoke(main, ["--project", str(project.root), *command.split(), "dev"])
    assert _engine_collector() == collector
    client.close_engine()
    client.start_engine()  # outside a command: Go's own target
    assert _engine_collector() == ("100", "192MiB", False)
    client.close_engine()
    with client.collecting_at_limit():
        client.start_engine(few=True)  # a few environments' CRD compiles: near the usual soft limit
    assert _engine_collector() == ("100", "192MiB", False)
