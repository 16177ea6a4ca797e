"""A Helm chart repository (index.yaml plus packaged charts) read over http(s) or file://.

This is the only module that does network I/O, and only `krc vendor` and `crd-diff NAME@VERSION` call it.
"""
from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import yamlio
from ..problems import KrcError

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
    override = os.environ.get(REPOSITORY_OVERRIDE_VARIABLE, "").strip()
    return override or configured


def _read_url(url: str) -> bytes:
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "file":
        path = Path(urllib.request.url2pathname(parsed.path))
        try:
            return path.read_bytes()
        except OSError as err:
            raise KrcError(f"cannot read {url}: {err.strerror}; check the chart repository path") from None
    if parsed.scheme not in ("http", "https"):
        raise KrcError(f"unsupported chart repository URL '{url}'; use http(s):// or file://")
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            data: bytes = response.read()  # urlopen's result is typed Any
            return data
    except urllib.error.HTTPError as err:
        raise KrcError(f"GET {url} answered HTTP {err.code}; check the repository URL "
                       f"or set {REPOSITORY_OVERRIDE_VARIABLE}") from None
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise KrcError(f"cannot reach {url} ({reason}); check the network or set "
                       f"{REPOSITORY_OVERRIDE_VARIABLE} to a reachable mirror") from None


def _join(base: str, relative: str) -> str:
    """A URL from the index, resolved against the repository (a folder, so it ends with '/'), as Helm does."""
    return urllib.parse.urljoin(base if base.endswith("/") else base + "/", relative)


def _index(repository: str) -> dict[str, Any]:
    url = _join(repository, "index.yaml")
    index = yamlio.load(_read_url(url).decode("utf-8"), url)
    if not isinstance(index, dict) or not isinstance(index.get("entries"), dict):
        raise KrcError(f"{url} is not a Helm repository index (no 'entries'); check the repository URL")
    return index


def chart_versions(repository: str, name: str) -> list[str]:
    """Every version of a chart the repository lists."""
    return [str(e.get("version")) for e in _index(repository)["entries"].get(name) or []]


def find_chart(repository: str, name: str, version: str) -> ChartEntry:
    entries = _index(repository)["entries"].get(name) or []
    for entry in entries:
        if str(entry.get("version")) == version:
            urls = entry.get("urls") or []
            if not urls or not entry.get("digest"):
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
