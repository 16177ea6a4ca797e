"""What `krc vendor` wrote, read without any network code: the lock, each archive's path, and a vendored chart
checked against its locked digest. Kept apart from the downloads (vendor.py) because every render and the
plugin's warm `generate` read charts this way, and importing the HTTP stack costs them time for nothing.
"""
from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path

from ..diagnostics.problems import KrcError, Location
from ..documents import yamlio
from .package import Chart, Crd, cached_crds, read_chart_once

LOCK_NAME = "charts.lock.yaml"
# Helm's chart name rule (lower case letters, digits, dashes; `helm lint` rejects anything else) and SemVer 2.0
# as Helm reads chart versions. Both are checked before a name or version becomes part of a path.
_CHART_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SEMVER = re.compile(r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
                     r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$")
_DIGEST = re.compile(r"^[0-9a-f]{64}$")


def chart_pin_problem(name: str, version: str) -> str | None:
    """Why a chart name or version cannot be used, or None."""
    if not isinstance(name, str) or len(name) > 250 or not _CHART_NAME.fullmatch(name):
        return (f"chart name {name!r} is not a Helm chart name (lower case letters, digits and '-', starting and "
                "ending with a letter or digit)")
    if not isinstance(version, str) or len(version) > 128 or not _SEMVER.match(version):
        return f"chart version {version!r} is not a SemVer version such as 1.6.2; pin a released version"
    return None


def check_chart_pin(name: str, version: str, where: Location | None = None) -> None:
    problem = chart_pin_problem(name, version)
    if problem:
        raise KrcError(problem, where)


def archive_path(vendor_dir: Path, name: str, version: str) -> Path:
    check_chart_pin(name, version)
    return vendor_dir / "charts" / f"{name}-{version}.tgz"


def read_lock(vendor_dir: Path) -> dict[tuple[str, str], str]:
    """(name, version) -> sha256 digest."""
    path = vendor_dir / LOCK_NAME
    if not path.exists():
        return {}
    shown = f"vendor/{LOCK_NAME}"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise KrcError(f"cannot read {shown} ({err}); restore it from git", Location(shown)) from None
    return dict(_parsed_lock(text, shown))


# Parsed once per text: every environment of a run reads the lock (its chart's digest) and a run has one lock
@lru_cache(maxsize=8)
def _parsed_lock(text: str, shown: str) -> tuple[tuple[tuple[str, str], str], ...]:
    data = yamlio.load(text, shown) or {}
    charts = data.get("charts") if isinstance(data, dict) else None
    if not isinstance(charts, (list, type(None))):
        raise KrcError(f"{shown} is not a chart lock ('charts' must be a list); restore it from git", Location(shown))
    lock: dict[tuple[str, str], str] = {}
    for i, entry in enumerate(charts or []):
        fields = [entry.get(k) for k in ("name", "version", "digest")] if isinstance(entry, dict) else [None] * 3
        name, version, digest = (str(f) if isinstance(f, (str, int, float)) else None for f in fields)
        if name is None or version is None or digest is None or not _DIGEST.fullmatch(digest) \
                or chart_pin_problem(name, version):
            raise KrcError(f"{shown}: entry {i + 1} needs a valid name, version and sha256 digest "
                           f"({chart_pin_problem(name or '', version or '') or 'digest: 64 hex digits'}); restore "
                           "the file from git or delete the entry and run 'krc vendor'", Location(shown))
        lock[(name, version)] = digest
    return tuple(lock.items())


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _verified_archive(vendor_dir: Path, name: str, version: str) -> tuple[Path, bytes, str]:
    """The vendored archive's path, bytes and sha256, which its lock entry names; rendering never touches the
    network, so a missing chart is an error."""
    path = archive_path(vendor_dir, name, version)
    if not path.exists():
        raise KrcError(f"chart {name} {version} is not vendored ({path} is missing); run 'krc vendor'")
    locked = read_lock(vendor_dir).get((name, version))
    if locked is None:
        raise KrcError(f"chart {name} {version} has no entry in {vendor_dir / LOCK_NAME}; run 'krc vendor'")
    if not path.is_file() or path.is_symlink():
        raise KrcError(f"{path} is not a regular file; delete it and run 'krc vendor'")
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != locked:
        raise KrcError(f"{path} does not match its locked digest sha256:{locked}; delete it and run 'krc vendor'")
    return path, data, locked


def load_vendored_chart(vendor_dir: Path, name: str, version: str) -> Chart:
    """The vendored chart, read once per process (read_chart_once)."""
    path, data, _ = _verified_archive(vendor_dir, name, version)
    return read_chart_once(data, str(path))


def load_vendored_crds(vendor_dir: Path, name: str, version: str) -> tuple[Crd, ...]:
    """The vendored chart's CRDs, taken from krc's cache by the archive's digest when it holds them (the archive is
    then not unpacked), else from the chart."""
    path, data, digest = _verified_archive(vendor_dir, name, version)
    crds = cached_crds(data, str(path), digest)
    return crds if crds is not None else read_chart_once(data, str(path)).crds
