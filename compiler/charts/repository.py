"""A Helm chart repository (index.yaml plus packaged charts) read over http(s) or file://.

This is the only module that does network I/O, and only `krc vendor` and `crd-diff NAME@VERSION` call it.
"""
from __future__ import annotations

import hashlib
import importlib
import queue
import threading
import time
import urllib.error
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..diagnostics.problems import KrcError
from ..documents import yamlio
from ..settings import limits, variables

REPOSITORY_OVERRIDE_VARIABLE = "KRC_CHART_REPOSITORY"
# KubeRay's published Helm repository: where `NAME@VERSION` and `krc lint PATH` look when no environment says
KUBERAY_REPOSITORY = "https://ray-project.github.io/kuberay-helm/"
TIMEOUT_SECONDS = 30


@dataclass(frozen=True)
class ChartEntry:
    """One chart version as the repository index lists it."""

    name: str
    version: str
    digest: str
    url: str  # absolute


def effective_repository(configured: str) -> str:
    """The repository URL to use: KRC_CHART_REPOSITORY, when set, overrides every environment's own."""
    override = variables.value(REPOSITORY_OVERRIDE_VARIABLE)
    return override or configured


def _parse(url: str) -> urllib.parse.ParseResult:
    try:
        parsed = urllib.parse.urlparse(url)
        parsed.port  # noqa: B018 - validates the port and a bracketed host
    except ValueError as err:
        raise KrcError(f"'{url}' is not a valid URL ({err}); check the chart repository URL or "
                       f"{REPOSITORY_OVERRIDE_VARIABLE}") from None
    return parsed


def _http_get(url: str, deadline: float, results: queue.Queue[tuple[str, Any]]) -> None:
    """Runs in a worker thread: the body of `url`, bounded in size; the caller bounds the time."""
    try:
        limit = limits.DOWNLOAD_BYTES.value
        # loaded on the first download, not at every start: urllib.request brings http.client, ssl and email
        # (15 ms), and most commands read their charts from vendor/
        request = importlib.import_module("urllib.request")
        with request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            chunks, size = [], 0
            while True:
                if time.monotonic() > deadline:
                    return  # the caller has given up already
                chunk = response.read1(1 << 16)
                if not chunk:
                    break
                size += len(chunk)
                if size > limit:
                    results.put(("error", KrcError(f"GET {url}: " + limits.DOWNLOAD_BYTES.exceeded("the response"))))
                    return
                chunks.append(chunk)
        results.put(("ok", b"".join(chunks)))
    except BaseException as err:  # handed to the caller, which decides what it means
        results.put(("error", err))


def _download(url: str) -> bytes:
    """An http(s) body within one overall deadline per file: a server that trickles a byte at a time is
    abandoned, where a per-read timeout would wait forever. The worker thread is a daemon: abandoning it costs
    nothing once krc exits."""
    seconds = limits.DOWNLOAD_SECONDS.value
    results: queue.Queue[tuple[str, Any]] = queue.Queue()
    worker = threading.Thread(target=_http_get, args=(url, time.monotonic() + seconds, results), daemon=True)
    worker.start()
    try:
        status, value = results.get(timeout=seconds)
    except queue.Empty:
        raise KrcError(f"GET {url}: " + limits.DOWNLOAD_SECONDS.exceeded("the download") +
                       "; or check the network and the repository") from None
    if status == "ok":
        return bytes(value)
    if isinstance(value, KrcError):
        raise value
    if isinstance(value, urllib.error.HTTPError):
        raise KrcError(f"GET {url} answered HTTP {value.code}; check the repository URL "
                       f"or set {REPOSITORY_OVERRIDE_VARIABLE}")
    if isinstance(value, (urllib.error.URLError, OSError, ValueError)) or type(value).__module__.startswith("http"):
        reason = getattr(value, "reason", value)
        raise KrcError(f"cannot reach {url} ({reason}); check the network or set "
                       f"{REPOSITORY_OVERRIDE_VARIABLE} to a reachable mirror")
    raise value


def _read_url(url: str) -> bytes:
    parsed = _parse(url)
    if parsed.scheme == "file":
        path = Path(urllib.parse.unquote(parsed.path))  # what url2pathname does on POSIX
        try:
            if not path.is_file():
                raise KrcError(f"cannot read {url}: not a regular file; check the chart repository path")
            with path.open("rb") as handle:
                data = handle.read(limits.DOWNLOAD_BYTES.value + 1)
        except OSError as err:
            raise KrcError(f"cannot read {url}: {err.strerror}; check the chart repository path") from None
        if len(data) > limits.DOWNLOAD_BYTES.value:
            raise KrcError(f"{url}: " + limits.DOWNLOAD_BYTES.exceeded("its size"))
        return data
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise KrcError(f"unsupported chart repository URL '{url}'; use http(s):// or file://")
    return _download(url)


def _join(base: str, relative: str) -> str:
    """A chart URL from the index, resolved against the repository (a folder, so it ends with '/'), as Helm does.
    An index served over http(s) may only point to http(s): a `file://` URL there would make krc copy a local
    file into vendor/ as the chart."""
    _parse(base)
    _parse(relative)
    target = urllib.parse.urljoin(base if base.endswith("/") else base + "/", relative)
    if _parse(base).scheme in ("http", "https") and _parse(target).scheme not in ("http", "https"):
        raise KrcError(f"the index at {base} points to '{relative}'; an index served over http(s) may only point "
                       "to http(s) URLs: the repository is misconfigured or hostile")
    return target


def _index(repository: str) -> dict[str, Any]:
    url = _join(repository, "index.yaml")
    try:
        text = _read_url(url).decode("utf-8")
    except UnicodeDecodeError:
        raise KrcError(f"{url} is not a Helm repository index (not UTF-8 text); check the repository URL") from None
    index = yamlio.load(text, url)
    if not isinstance(index, dict) or not isinstance(index.get("entries"), dict):
        raise KrcError(f"{url} is not a Helm repository index (no 'entries'); check the repository URL")
    return index


def _entries(repository: str, name: str) -> list[dict[str, Any]]:
    entries = _index(repository)["entries"].get(name) or []
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise KrcError(f"the index of {repository} lists '{name}' as something other than a list of chart "
                       "versions; check the repository")
    return entries


def chart_versions(repository: str, name: str) -> list[str]:
    """Every version of a chart the repository lists."""
    return [str(e.get("version")) for e in _entries(repository, name)]


def find_chart(repository: str, name: str, version: str) -> ChartEntry:
    entries = _entries(repository, name)
    for entry in entries:
        if str(entry.get("version")) == version:
            urls = entry.get("urls") or []
            if not isinstance(urls, list) or not urls or not isinstance(entry.get("digest"), str):
                raise KrcError(f"the index of {repository} lists {name} {version} without urls or digest")
            return ChartEntry(name, version, str(entry["digest"]), _join(repository, str(urls[0])))
    known = ", ".join(sorted(str(e.get("version")) for e in entries)) or "none"
    raise KrcError(f"chart {name} version {version} is not in {repository} (versions there: {known}); "
                   "pin a listed version")


def download(entry: ChartEntry) -> bytes:
    """The packaged chart, checked against the digest the index promises."""
    payload = _read_url(entry.url)
    actual = hashlib.sha256(payload).hexdigest()
    if actual != entry.digest:
        raise KrcError(f"digest mismatch for {entry.name} {entry.version} from {entry.url}: index says "
                       f"sha256:{entry.digest}, download is sha256:{actual}; the repository or a mirror is "
                       "corrupt or tampered with, do not use it")
    return payload
