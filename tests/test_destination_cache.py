"""Where each environment deploys (the peers every environment's findings compare with), kept in the cache so a
command on one environment does not load every other one: the same answer as loading them, a changed layer or a
corrupt entry is never believed."""
from __future__ import annotations

from pathlib import Path

import pytest
from cache_support import entry_files

from compiler import pipeline
from compiler.diagnostics.problems import KrcError
from compiler.pipeline.environments import project_destinations
from compiler.project.paths import Project
from compiler.results import destination_cache
from compiler.results.compile_cache import CompileCache
from compiler.results.destination_cache import DestinationIndex


@pytest.fixture
def cache_dir(private_cache: Path) -> Path:
    """A cache of the test's own, with no destinations in it yet (Helm's answers already there)."""
    assert not (private_cache / destination_cache.DESTINATIONS.name).exists()
    return private_cache


def _entries(cache_dir: Path) -> list[Path]:
    return entry_files(cache_dir, destination_cache.DESTINATIONS)


def _known(cache: CompileCache, names: list[str]) -> list[bool]:
    index = DestinationIndex(cache)
    return [index.destination(name)[0] for name in names]


def test_cached_destinations_are_the_loaded_ones(project: Project, cache_dir: Path):
    loaded = project_destinations(project)
    assert loaded
    assert project_destinations(project, DestinationIndex(CompileCache(project))) == loaded  # computed and stored
    [index] = _entries(cache_dir)  # one index for the project
    written = index.stat().st_mtime_ns
    cache = CompileCache(project)
    assert all(_known(cache, project.environment_names()))
    assert project_destinations(project, DestinationIndex(cache)) == loaded  # read back
    assert index.stat().st_mtime_ns == written  # nothing changed: not written again


def test_a_changed_layer_is_loaded_again(project: Project, cache_dir: Path):
    project_destinations(project, DestinationIndex(CompileCache(project)))
    base = project.environment_file("base")
    base.write_text(base.read_text().replace("namespace: kuberay-system", "namespace: kuberay-operators"))
    assert "kuberay-operators" in base.read_text()
    cache = CompileCache(project)
    assert not any(_known(cache, project.environment_names()))
    fresh = project_destinations(project, DestinationIndex(cache))
    assert fresh == project_destinations(project)
    assert any("kuberay-operators" in d.namespaces for d in fresh)


def test_a_corrupt_or_disabled_entry_is_not_believed(project: Project, cache_dir: Path):
    project_destinations(project, DestinationIndex(CompileCache(project)))
    [index] = _entries(cache_dir)
    header, _, body = index.read_bytes().partition(b"\n")
    index.write_bytes(header + b"\n" + body.replace(b"\"key\"", b"\"kee\""))  # fails its checksum
    names = project.environment_names()
    assert not any(_known(CompileCache(project), names))
    assert not any(_known(CompileCache(project, enabled=False), names))
    assert project_destinations(project, DestinationIndex(CompileCache(project))) == project_destinations(project)


def test_a_lowered_input_bound_is_never_answered_from_the_cache(project: Project, cache_dir: Path,
                                                                monkeypatch: pytest.MonkeyPatch):
    names = project.environment_names()
    pipeline.render_to_disk(project, names, pipeline.RunOptions(cache=True, workers=1))
    monkeypatch.setenv("KRC_MAX_ENVIRONMENT_BYTES", "100")
    with pytest.raises(KrcError, match="KRC_MAX_ENVIRONMENT_BYTES"):
        pipeline.render_to_disk(project, names, pipeline.RunOptions(cache=True, workers=1))


def test_unread_counts_the_environments_whose_files_must_be_read(project: Project, cache_dir: Path):
    names = project.environment_names()
    assert DestinationIndex(CompileCache(project)).unread(names) == len(names)  # cold
    project_destinations(project, DestinationIndex(CompileCache(project)))
    assert DestinationIndex(CompileCache(project)).unread(names) == 0
    assert DestinationIndex(CompileCache(project)).unread([*names, "not-yet-seen"]) == 1
    assert DestinationIndex(CompileCache(project, enabled=False)).unread(names) == len(names)
