"""Fixtures for the CRD comparison tests: the upstream charts, parsed once, and a local chart repository."""
from __future__ import annotations

import functools
import http.server
from collections.abc import Iterator
from pathlib import Path

import pytest
from http_support import base_url, serving

from compiler.crddiff import load_crd_source

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
CHARTS = SHARED / "kuberay" / "charts"


def chart_path(version: str) -> Path:
    return CHARTS / f"kuberay-operator-{version}.tgz"


@functools.cache
def _chart_crds(version: str) -> tuple[dict, ...]:
    return tuple(load_crd_source(str(chart_path(version)), None))


@pytest.fixture(scope="session")
def chart_crds():
    """version -> the chart's CRDs (parsed once per session; copy before mutating)."""
    return lambda version: list(_chart_crds(version))


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 (the stdlib's name)
        pass


@pytest.fixture(scope="session")
def chart_server() -> Iterator[str]:
    """A real HTTP chart repository on 127.0.0.1 serving the upstream charts; yields its URL."""
    with serving(functools.partial(_QuietHandler, directory=str(CHARTS))) as server:
        yield f"{base_url(server)}/"
