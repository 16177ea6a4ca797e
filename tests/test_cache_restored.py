"""A cache carried to another checkout is believed: what CI caches do (actions/cache tars krc's cache folder after one
job and untars it before the next, on another runner, into a fresh clone: other paths, inodes and times). Entries
are keyed by what they were computed from, never by where or when, so the clone compiles nothing; the signature
memos (which do depend on inodes and times) are only ever a shortcut, and are worked out again."""
from __future__ import annotations

import io
import shutil
import tarfile
from pathlib import Path

import pytest
from cache_support import entry_files
from project_support import engine_unavailable

from compiler import pipeline
from compiler.output import folders
from compiler.project.paths import Project
from compiler.results import compile_cache

CACHED = pipeline.RunOptions(cache=True, workers=1)


def carried(folder: Path, to: Path) -> Path:
    """`folder` as a CI cache restores it: through a tar archive, unpacked into a folder of this user's."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        tar.add(folder, arcname=".")
    archive.seek(0)
    to.mkdir(mode=0o700)
    with tarfile.open(fileobj=archive) as tar:
        tar.extractall(to, filter="data")
    return to


def fresh_clone(project: Project, to: Path) -> Project:
    """The project's committed files at another path, every file new (as a checkout writes them), no rendered/."""
    for part in ("environments", "templates", "policies", "golden", "vendor"):
        if (project.root / part).exists():
            shutil.copytree(project.root / part, to / part, copy_function=shutil.copy)
    return Project(to)


def test_a_cache_restored_into_a_fresh_clone_compiles_nothing(project: Project, private_cache: Path,
                                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    names = project.environment_names()
    written = pipeline.render_to_disk(project, names, CACHED)
    assert sorted(r.name for r in written if r.compiled) == names
    checked = pipeline.check_golden(project, names, CACHED)
    clone = fresh_clone(project, tmp_path / "clone")
    restored = carried(private_cache, tmp_path / "restored")
    monkeypatch.setenv("KRC_CACHE_DIR", str(restored))
    before = entry_files(restored, compile_cache.COMPILED)
    engine_unavailable(monkeypatch, tmp_path)  # a compile would need the engine: none can start now
    again = pipeline.render_to_disk(clone, names, CACHED)
    assert [r.name for r in again if r.compiled] == []
    assert folders.read_tree(clone.rendered_dir) == folders.read_tree(project.rendered_dir)
    assert pipeline.check_golden(clone, names, CACHED) == checked
    assert entry_files(restored, compile_cache.COMPILED) == before
