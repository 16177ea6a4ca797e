"""Downloads from a real HTTP server on 127.0.0.1: an overall deadline per file, a size bound, and an index
served over http that points at a local file."""
from __future__ import annotations

import contextlib
import hashlib
import http.server
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from http_support import base_url, serving

from compiler.charts import repository, vendor
from compiler.charts.pins import ChartPin
from compiler.diagnostics.problems import KrcError


class _Trickle(http.server.BaseHTTPRequestHandler):
    """Answers with a long body, one byte every 0.3 s: each read succeeds, the whole never arrives in time."""

    body = b""
    delay = 0.3

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        try:
            for byte in self.body:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(self.delay)
        except (BrokenPipeError, ConnectionResetError):
            pass


class _Static(http.server.BaseHTTPRequestHandler):
    routes: dict[str, bytes] = {}

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        body = self.routes.get(self.path)
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")


@pytest.fixture
def server() -> Iterator[callable]:
    with contextlib.ExitStack() as servers:
        def start(handler: type[http.server.BaseHTTPRequestHandler]) -> str:
            return base_url(servers.enter_context(serving(handler)))

        yield start


def test_a_trickling_server_is_abandoned_at_the_overall_deadline(server, monkeypatch, tmp_path: Path):
    monkeypatch.delenv(repository.REPOSITORY_OVERRIDE_VARIABLE, raising=False)
    monkeypatch.setenv("KRC_DOWNLOAD_DEADLINE", "1")
    _Trickle.body = b"entries: {}\n" * 100
    url = server(_Trickle)
    started = time.monotonic()
    with pytest.raises(KrcError, match="KRC_DOWNLOAD_DEADLINE"):
        vendor.vendor(tmp_path / "vendor", [ChartPin("kuberay-operator", "1.7.0", url)])
    assert time.monotonic() - started < 5
    assert not (tmp_path / "vendor").exists()


def test_a_response_beyond_the_size_bound_is_refused(server, monkeypatch, tmp_path: Path):
    monkeypatch.delenv(repository.REPOSITORY_OVERRIDE_VARIABLE, raising=False)
    monkeypatch.setenv("KRC_MAX_DOWNLOAD_BYTES", "1000")
    _Static.routes = {"/index.yaml": b"entries: {}\n" + b"#" * 5000 + b"\n"}
    url = server(_Static)
    with pytest.raises(KrcError, match="KRC_MAX_DOWNLOAD_BYTES"):
        vendor.vendor(tmp_path / "vendor", [ChartPin("kuberay-operator", "1.7.0", url)])


def test_an_http_index_may_not_point_at_a_local_file(server, monkeypatch, tmp_path: Path, charts_dir: Path):
    """The chart would be a local file copied into vendor/; its digest even matches what the index says."""
    monkeypatch.delenv(repository.REPOSITORY_OVERRIDE_VARIABLE, raising=False)
    local = charts_dir / "kuberay-operator-1.7.0.tgz"
    index = {"apiVersion": "v1", "entries": {"kuberay-operator": [
        {"name": "kuberay-operator", "version": "1.7.0", "urls": [local.as_uri()],
         "digest": hashlib.sha256(local.read_bytes()).hexdigest()}]}}
    _Static.routes = {"/index.yaml": yaml.safe_dump(index).encode()}
    url = server(_Static)
    with pytest.raises(KrcError, match="may only point to http"):
        vendor.vendor(tmp_path / "vendor", [ChartPin("kuberay-operator", "1.7.0", url)])
    assert not (tmp_path / "vendor").exists()


def test_an_unreachable_server_is_one_clear_error(monkeypatch, tmp_path: Path):
    monkeypatch.delenv(repository.REPOSITORY_OVERRIDE_VARIABLE, raising=False)
    with pytest.raises(KrcError, match="cannot reach http://127.0.0.1:9/index.yaml"):
        vendor.vendor(tmp_path / "vendor", [ChartPin("kuberay-operator", "1.7.0", "http://127.0.0.1:9")])
