"""`helm template` of a vendored chart with the pinned Helm: what the operator Application deploys, cached.

krc runs `helm template <chart> --name-template <release> --namespace <ns> --kube-version <v> --skip-crds` with
the environment's values (what Argo CD would run for a Helm source); the operator Application deploys this output
through the krc plugin (`operator=only`), so review and deployment share one Helm binary. The output
depends only on the chart archive, the values, release, namespace, Kubernetes version and Helm version, so it is
cached under that key in krc's cache dir: a warm render starts no process at all.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import tarfile
import tempfile
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import yamlio
from ..problems import KrcError, Location
from ..user_cache import cache_dir
from .helm_pin import Helm, HelmPin, find_helm, helm_environment

TEMPLATE_TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class TemplateRequest:
    archive: Path
    archive_sha256: str
    release: str
    namespace: str
    kube_version: str  # 1.33
    values: dict[str, Any]

    def cache_key(self, helm_version: str) -> str:
        facts = [helm_version, self.archive_sha256, self.release, self.namespace, self.kube_version, self.values]
        return hashlib.sha256(json.dumps(facts, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


CACHE_FOLDER = "helm-template"  # in krc's cache: Helm's output by TemplateRequest.cache_key


def _cache_file(key: str) -> Path:
    return cache_dir() / CACHE_FOLDER / f"{key}.yaml"


def _store(key: str, text: str) -> None:
    """Best effort and atomic: concurrent renders (Argo CD runs several) never see half a file."""
    path = _cache_file(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmpl-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError:
        pass


# Charts unpacked once per process, by archive digest: Helm reads a chart folder in three quarters of the CPU
# time it takes to unpack the archive itself, and every environment of a run renders one of a few charts.
_UNPACKED: dict[str, Path] = {}
_UNPACK_ROOT: list[tempfile.TemporaryDirectory[str]] = []  # removed when the process exits


def _chart_folder(request: TemplateRequest) -> Path:
    """The chart archive unpacked (regular files and folders inside the target only: tarfile's data filter);
    the archive itself when it does not hold exactly one chart folder."""
    if request.archive_sha256 in _UNPACKED:
        return _UNPACKED[request.archive_sha256]
    if not _UNPACK_ROOT:
        _UNPACK_ROOT.append(tempfile.TemporaryDirectory(prefix="krc-charts-"))
    target = Path(_UNPACK_ROOT[0].name) / request.archive_sha256
    try:
        data = request.archive.read_bytes()  # unpacked from the bytes whose digest matches the lock
        if hashlib.sha256(data).hexdigest() != request.archive_sha256:
            return request.archive
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            archive.extractall(target, filter="data")
    except (OSError, tarfile.TarError):
        return request.archive
    folders = [p for p in target.iterdir() if p.is_dir()]
    chosen = folders[0] if len(folders) == 1 and len(list(target.iterdir())) == 1 else request.archive
    _UNPACKED[request.archive_sha256] = chosen
    return chosen


def _run_helm(helm: Helm, request: TemplateRequest, where: Location) -> str:
    chart = _chart_folder(request) if request.archive_sha256 else request.archive
    with tempfile.TemporaryDirectory(prefix="krc-helm-") as scratch:
        folder = Path(scratch)
        values = folder / "values.json"  # JSON is YAML: the values go to Helm as data, never as --set strings
        values.write_text(json.dumps(request.values, sort_keys=True), encoding="utf-8")
        command = [str(helm.path), "template", request.release, str(chart),
                   "--namespace", request.namespace, "--kube-version", request.kube_version,
                   "--skip-crds", "--values", str(values)]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=TEMPLATE_TIMEOUT_SECONDS,
                                    env=helm_environment(folder), cwd=folder, check=False)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise KrcError(f"helm template failed to run ({err}); check the Helm binary", where) from None
    if result.returncode != 0:
        message = " ".join(result.stderr.split())[:600] or "no message"
        raise KrcError(f"helm template of {request.archive.name} failed: {message}; fix operator.values", where)
    return result.stdout


# `helm template` runs started ahead (start_ahead): while this process renders a batch of environments, Helm
# renders their charts on threads (each waits on a pipe, so the other cores do the work). The batch's renders
# wait for Helm one after the other with little work between, so two run at a time where there are two cores;
# a run that ends early (an error) has at most that many Helm processes to wait for.
AHEAD_LANES = max(1, min(2, os.cpu_count() or 1))


class _Ahead:
    """The runs of this process: queued in the batch's order, a few under way on threads, taken by template_chart."""

    def __init__(self) -> None:
        self.lanes = AHEAD_LANES  # fewer while other processes compile too (use_ahead_lanes)
        self.queue: deque[tuple[str, Helm, TemplateRequest]] = deque()
        self.running: dict[str, Future[str | None]] = {}  # by cache key
        self.pool: ThreadPoolExecutor | None = None

    def start(self, helm: Helm, requests: Sequence[TemplateRequest]) -> None:
        # what an earlier batch left (its environment failed before it needed its chart) is not waited for
        self.queue.clear()
        self.running = {key: future for key, future in self.running.items() if not future.done()}
        known = set(self.running)
        for request in requests:
            key = request.cache_key(helm.version)
            if key not in known and not _cache_file(key).exists():
                if request.archive_sha256:
                    _chart_folder(request)  # unpacked here, once: threads only read the folder
                self.queue.append((key, helm, request))
                known.add(key)
        self.top_up()

    def top_up(self) -> None:
        while self.queue and sum(not future.done() for future in self.running.values()) < self.lanes:
            if self.pool is None:
                self.pool = ThreadPoolExecutor(max_workers=AHEAD_LANES, thread_name_prefix="krc-helm")
            key, helm, request = self.queue.popleft()
            self.running[key] = self.pool.submit(_run_ahead, key, helm, request)

    def take(self, key: str) -> str | None:
        """The output of a run started ahead for `key` (waiting for it), or None: then the caller runs Helm (a run
        not started yet is dropped: the caller needs it now)."""
        future = self.running.pop(key, None)
        if future is None:
            self.queue = deque(item for item in self.queue if item[0] != key)
        text = future.result() if future is not None else None
        self.top_up()
        return text


_AHEAD = _Ahead()


def use_ahead_lanes(lanes: int) -> None:
    """How many Helm runs may be under way ahead: none where every core already compiles (worker processes),
    where Helm ahead only competes with them (measured: 2-3% more CPU, no gain)."""
    _AHEAD.lanes = max(0, min(AHEAD_LANES, lanes))


def start_ahead(pin: HelmPin, requests: Sequence[TemplateRequest]) -> None:
    """Queue `helm template` of the requests the cache lacks, in order; template_chart takes their output. Nothing
    is queued without a lane, or when Helm cannot be found: template_chart reports that, as always."""
    if not _AHEAD.lanes:
        return
    try:
        helm = find_helm(pin)
    except KrcError:
        return
    _AHEAD.start(helm, requests)


def _run_ahead(key: str, helm: Helm, request: TemplateRequest) -> str | None:
    """Helm's output, stored in the cache; None when Helm failed (template_chart runs it again to report it)."""
    try:
        text = _run_helm(helm, request, Location(CACHE_FOLDER))
    except KrcError:
        return None
    _store(key, text)
    return text


def template_chart(pin: HelmPin, request: TemplateRequest, where: Location) -> list[dict[str, Any]]:
    """The chart's objects in Helm's order (Helm sorts by kind, as it installs)."""
    key = request.cache_key(pin.version)
    text = _AHEAD.take(key) if _AHEAD.running or _AHEAD.queue else None
    if text is None:
        try:
            text = _cache_file(key).read_text(encoding="utf-8")
        except OSError:
            text = _run_helm(find_helm(pin), request, where)
            _store(key, text)
    documents = yamlio.load_all(text, f"helm template {request.archive.name}")
    objects = [d for d in documents if d is not None]
    for doc in objects:
        if not isinstance(doc, dict) or not doc.get("kind"):
            raise KrcError(f"helm template of {request.archive.name} printed a document that is not an object",
                           where)
    return objects
