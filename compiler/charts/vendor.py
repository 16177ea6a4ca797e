"""The vendor cache: pinned charts downloaded once, checked against a committed lock, read offline.

Layout: `vendor/charts/<name>-<version>.tgz` (not committed) and `vendor/charts.lock.yaml` (committed), which
records each chart's version and sha256 digest so a later download, from any mirror, must match it.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from .. import yamlio
from ..atomic_file import write_atomically
from ..problems import KrcError, Location
from . import repository
from .package import Chart, read_chart, read_chart_bytes

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
    if not isinstance(name, str) or len(name) > 250 or not _CHART_NAME.match(name):
        return (f"chart name {name!r} is not a Helm chart name (lower case letters, digits and '-', starting and "
                "ending with a letter or digit)")
    if not isinstance(version, str) or len(version) > 128 or not _SEMVER.match(version):
        return f"chart version {version!r} is not a SemVer version such as 1.6.2; pin a released version"
    return None


def check_chart_pin(name: str, version: str, where: Location | None = None) -> None:
    problem = chart_pin_problem(name, version)
    if problem:
        raise KrcError(problem, where)


@dataclass(frozen=True, order=True)
class ChartPin:
    """What an environment asks for."""

    name: str
    version: str
    repository: str


@dataclass(frozen=True)
class VendorResult:
    pin: ChartPin
    digest: str
    downloaded: bool


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
    data = yamlio.load(text, shown) or {}
    charts = data.get("charts") if isinstance(data, dict) else None
    if not isinstance(charts, (list, type(None))):
        raise KrcError(f"{shown} is not a chart lock ('charts' must be a list); restore it from git", Location(shown))
    lock: dict[tuple[str, str], str] = {}
    for i, entry in enumerate(charts or []):
        fields = [entry.get(k) for k in ("name", "version", "digest")] if isinstance(entry, dict) else [None] * 3
        name, version, digest = (str(f) if isinstance(f, (str, int, float)) else None for f in fields)
        if name is None or version is None or digest is None or not _DIGEST.match(digest) \
                or chart_pin_problem(name, version):
            raise KrcError(f"{shown}: entry {i + 1} needs a valid name, version and sha256 digest "
                           f"({chart_pin_problem(name or '', version or '') or 'digest: 64 hex digits'}); restore "
                           "the file from git or delete the entry and run 'krc vendor'", Location(shown))
        lock[(name, version)] = digest
    return lock


def _write_lock(vendor_dir: Path, lock: dict[tuple[str, str], str]) -> None:
    charts = [{"name": n, "version": v, "digest": d} for (n, v), d in sorted(lock.items())]
    content: dict[str, object] = {"charts": charts}
    path = vendor_dir / LOCK_NAME
    if path.exists():  # the Helm pin (see helm_pin.py) is kept as written: krc vendor only manages charts
        previous = yamlio.load(path.read_text(encoding="utf-8"), str(path)) or {}
        if isinstance(previous, dict) and previous.get("helm") is not None:
            content["helm"] = previous["helm"]
    text = "# Written by 'krc vendor'. Commit it: downloads must match these digests.\n" + yamlio.dump(content)
    write_atomically(vendor_dir / LOCK_NAME, text.encode("utf-8"))


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def up_to_date(vendor_dir: Path, pins: list[ChartPin]) -> bool:
    """Whether every pinned chart is vendored and matches the lock (then `vendor` writes nothing)."""
    lock = read_lock(vendor_dir)
    for pin in pins:
        path = archive_path(vendor_dir, pin.name, pin.version)
        locked = lock.get((pin.name, pin.version))
        if not locked or not path.is_file() or _sha256_file(path) != locked:
            return False
    return True


def vendor(vendor_dir: Path, pins: list[ChartPin]) -> list[VendorResult]:
    """Make every pinned chart present in the cache; download only what is missing or wrong.

    Nothing is written when every chart is already vendored and locked (a read-only checkout in Argo CD's
    repo-server must work).
    """
    for pin in pins:
        check_chart_pin(pin.name, pin.version)
    lock = read_lock(vendor_dir)
    before = dict(lock)
    results = []
    for pin in sorted(set(pins)):
        key = (pin.name, pin.version)
        path = archive_path(vendor_dir, pin.name, pin.version)
        locked = lock.get(key)
        if locked and path.exists() and _sha256_file(path) == locked:
            results.append(VendorResult(pin, locked, False))
            continue
        repo = repository.effective_repository(pin.repository)
        entry = repository.find_chart(repo, pin.name, pin.version)
        if locked and entry.digest != locked:
            raise KrcError(f"{repo} lists {pin.name} {pin.version} with sha256:{entry.digest}, but "
                           f"{vendor_dir / LOCK_NAME} pins sha256:{locked}; a published chart changed. "
                           "Investigate before deleting the lock entry")
        payload = repository.download(entry)
        read_chart_bytes(payload, entry.url)  # a chart krc cannot read safely never reaches vendor/
        write_atomically(path, payload)
        lock[key] = entry.digest
        results.append(VendorResult(pin, entry.digest, True))
    if lock != before:
        _write_lock(vendor_dir, lock)
    return results


def load_vendored_chart(vendor_dir: Path, name: str, version: str) -> Chart:
    """The cached chart; rendering never touches the network, so a missing chart is an error."""
    path = archive_path(vendor_dir, name, version)
    if not path.exists():
        raise KrcError(f"chart {name} {version} is not vendored ({path} is missing); run 'krc vendor'")
    locked = read_lock(vendor_dir).get((name, version))
    if locked is None:
        raise KrcError(f"chart {name} {version} has no entry in {vendor_dir / LOCK_NAME}; run 'krc vendor'")
    if not path.is_file() or path.is_symlink():
        raise KrcError(f"{path} is not a regular file; delete it and run 'krc vendor'")
    if _sha256_file(path) != locked:
        raise KrcError(f"{path} does not match its locked digest sha256:{locked}; delete it and run 'krc vendor'")
    return read_chart(path)


def vendored_or_downloaded(vendor_dir: Path | None, name: str, version: str, repository_url: str) -> Chart:
    """A chart the project has vendored (and locked), else the repository's, downloaded into memory only.

    For commands that name a version no environment pins (`krc lint PATH`, `krc crd-diff NAME@VERSION`).
    """
    if vendor_dir is not None and (name, version) in read_lock(vendor_dir) \
            and archive_path(vendor_dir, name, version).is_file():
        return load_vendored_chart(vendor_dir, name, version)
    entry = repository.find_chart(repository.effective_repository(repository_url), name, version)
    return read_chart_bytes(repository.download(entry), entry.url)
