#!/usr/bin/env python3
"""Where krc keeps its cache in a GitHub job, and the keys the action keeps it and Ray's generators under.

    krc_cache_keys.py            (run in the krc project's folder, after `krc vendor`)

Writes to $GITHUB_ENV: KRC_CACHE_DIR (the one the job already sets, else $RUNNER_TEMP/krc-cache), so every krc step
after it uses that folder; to $GITHUB_OUTPUT:
- `cache-dir`: that folder;
- `key`: krc-cache-<os>-<digest of krc's version, vendor/charts.lock.yaml and every file under templates/>. The
  action saves the folder under this key plus the run's id after every run, and restores the latest one saved
  under it. An entry is only ever believed for the inputs it was computed from (krc verifies each), so the key
  decides what is carried forward, not what is trusted: a new krc, chart lock or template starts a cache of its
  own, which keeps the saved folders from growing with every release of templates (krc never prunes its cache).
  Environment files and policies are left out: an edit to one changes a few entries, not all;
- `ray-key`: krc-ray-<os>-py<Python version>-<the Ray versions the environments name>, for the virtual
  environments of Ray's autoscaler config generator (empty when the environments name none).
Exit 0, or 2 with one line when krc cannot be run or cannot read the project.
"""
from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

LOCK = Path("vendor") / "charts.lock.yaml"
TEMPLATES = Path("templates")


def krc(*args: str) -> str:
    return subprocess.run(["krc", *args], capture_output=True, text=True, check=True).stdout


def inputs_digest(version: str, project: Path) -> str:
    """The digest of what every compiled entry depends on: krc's version, the chart lock, the templates."""
    digest = hashlib.sha256(version.encode())
    files = [project / LOCK] + sorted(p for p in (project / TEMPLATES).rglob("*") if p.is_file())
    for path in files:
        if path.is_file():
            digest.update(b"\0" + path.relative_to(project).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def cache_key(runner_os: str, version: str, project: Path) -> str:
    return f"krc-cache-{runner_os}-{inputs_digest(version, project)}"


def ray_key(runner_os: str, python_version: str, ray_versions: Iterable[str]) -> str:
    versions = sorted(set(ray_versions))
    return f"krc-ray-{runner_os}-py{python_version}-{'_'.join(versions)}" if versions else ""


def append(variable: str, lines: list[str]) -> None:
    target = os.environ.get(variable)
    if target:
        with open(target, "a", encoding="utf-8") as stream:
            stream.writelines(f"{line}\n" for line in lines)
    else:
        print("\n".join(lines))


def main() -> int:
    runner_os = os.environ.get("RUNNER_OS") or platform.system()
    folder = os.environ.get("KRC_CACHE_DIR") or str(Path(os.environ.get("RUNNER_TEMP", ".")) / "krc-cache")
    try:
        version = krc("--version")
        ray_versions = krc("autoscaler", "--ray-versions").split()
    except OSError as err:
        print(f"krc_cache_keys.py: cannot run krc ({err.strerror}); install krc before this step", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as err:
        said = (err.stderr or "").strip().splitlines()
        print(f"krc_cache_keys.py: {' '.join(err.cmd)} failed: {said[-1] if said else err.returncode}",
              file=sys.stderr)
        return 2
    append("GITHUB_ENV", [f"KRC_CACHE_DIR={folder}"])
    append("GITHUB_OUTPUT", [f"cache-dir={folder}", f"key={cache_key(runner_os, version, Path.cwd())}",
                             f"ray-key={ray_key(runner_os, platform.python_version(), ray_versions)}"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
