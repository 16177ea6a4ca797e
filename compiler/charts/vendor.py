"""The vendor cache: pinned charts downloaded once, checked against a committed lock, read offline.

Layout: `vendor/charts/<name>-<version>.tgz` (not committed) and `vendor/charts.lock.yaml` (committed), which
records each chart's version and sha256 digest so a later download, from any mirror, must match it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..diagnostics.problems import KrcError
from ..documents import yamlio
from ..files.atomic_file import write_atomically
from . import repository
from .package import Chart, read_chart_bytes
from .pins import ChartPin
from .vendored import LOCK_NAME, archive_path, check_chart_pin, load_vendored_chart, read_lock, sha256_file


@dataclass(frozen=True)
class VendorResult:
    pin: ChartPin
    digest: str
    downloaded: bool


def _write_lock(vendor_dir: Path, lock: dict[tuple[str, str], str]) -> None:
    charts = [{"name": n, "version": v, "digest": d} for (n, v), d in sorted(lock.items())]
    content: dict[str, object] = {"charts": charts}
    text = "# Written by 'krc vendor'. Commit it: downloads must match these digests.\n" + yamlio.dump(content)
    write_atomically(vendor_dir / LOCK_NAME, text.encode("utf-8"))


def up_to_date(vendor_dir: Path, pins: list[ChartPin]) -> bool:
    """Whether every pinned chart is vendored and matches the lock (then `vendor` writes nothing)."""
    lock = read_lock(vendor_dir)
    for pin in pins:
        path = archive_path(vendor_dir, pin.name, pin.version)
        locked = lock.get((pin.name, pin.version))
        if not locked or not path.is_file() or sha256_file(path) != locked:
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
        if locked and path.exists() and sha256_file(path) == locked:
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


def vendored_or_downloaded(vendor_dir: Path | None, name: str, version: str, repository_url: str) -> Chart:
    """A chart the project has vendored (and locked), else the repository's, downloaded into memory only.

    For commands that name a version no environment pins (`krc lint PATH`, `krc crd-diff NAME@VERSION`).
    """
    if vendor_dir is not None and (name, version) in read_lock(vendor_dir) \
            and archive_path(vendor_dir, name, version).is_file():
        return load_vendored_chart(vendor_dir, name, version)
    entry = repository.find_chart(repository.effective_repository(repository_url), name, version)
    return read_chart_bytes(repository.download(entry), entry.url)
