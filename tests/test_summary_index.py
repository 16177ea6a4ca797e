"""Every environment's compile summary in one cache entry per project (compiler/results/summary_index.py): the
command's own process reads one file instead of one per environment, and believes an entry only as it would the
environment's own."""
from __future__ import annotations

import shutil
from pathlib import Path

from project_support import copy_environment

from compiler import pipeline
from compiler.project.paths import Project
from compiler.results.summary_index import SUMMARY_INDEX


def _index_entries(cache: Path) -> dict[str, dict]:
    [entry] = [p for p in (cache / SUMMARY_INDEX.name).iterdir() if not p.name.startswith(".")]
    payload = SUMMARY_INDEX.read_json(entry.name, cache)
    assert isinstance(payload, dict)
    return payload["entries"]


def test_a_warm_command_reads_the_summaries_from_the_index(project: Project, private_cache: Path):
    copy_environment(project, "dev")
    names = project.environment_names()
    pipeline.render_to_disk(project, names)
    assert sorted(e["name"] for e in _index_entries(private_cache).values()) == sorted(names)
    shutil.rmtree(private_cache / "summaries")  # only the index can answer now
    results = pipeline.render_to_disk(project, names)
    assert not any(r.compiled or r.staged for r in results)


def test_an_index_entry_is_believed_only_under_the_environment_s_current_key(project: Project,
                                                                             private_cache: Path):
    """The index keeps the summary of dev's file as it was; once the file changes, its key does, and dev compiles
    again; the index then holds the new summary only."""
    copy_environment(project, "dev")
    names = project.environment_names()
    pipeline.render_to_disk(project, names)
    before = set(_index_entries(private_cache))
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text() + "\n# changed\n")
    results = {r.name: r for r in pipeline.render_to_disk(project, names)}
    assert results["dev"].compiled and not results["dev-copy"].compiled
    after = _index_entries(private_cache)
    assert sorted(e["name"] for e in after.values()) == sorted(names)
    [new] = set(after) - before
    assert after[new]["name"] == "dev"


def test_the_index_holds_the_project_s_environments_only(project: Project, private_cache: Path):
    copy_environment(project, "dev")
    pipeline.render_to_disk(project, project.environment_names())
    project.environment_file("dev-copy").unlink()
    pipeline.render_to_disk(project, ["dev"])  # a command over one environment keeps the others' entries...
    names = sorted(e["name"] for e in _index_entries(private_cache).values())
    assert names == sorted(project.environment_names())  # ...of existing files only
    assert "dev-copy" not in names and len(names) > 1
