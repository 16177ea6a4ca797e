"""The review cache: an environment golden/ matches is reviewed once, then answered from the cache for as long as
what its review depends on holds still; a changed, corrupt or tampered entry is never believed."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cache_support import entry_files
from review_support import edit

from compiler import pipeline, review
from compiler.documents import record_json
from compiler.pipeline import review_batch
from compiler.project.paths import Project
from compiler.results import compile_cache

CACHED = pipeline.RunOptions(cache=True, workers=1)


@pytest.fixture
def cache_dir(private_cache: Path) -> Path:
    return private_cache


def review_entries(cache_dir: Path) -> list[Path]:
    return entry_files(cache_dir, review_batch.REVIEWS)


def forbid_reviewing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make reviewing an environment from its render impossible: what still succeeds came from the cache."""
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("an environment was reviewed again")

    monkeypatch.setattr(review_batch, "validate_render", refuse)


@pytest.mark.usefixtures("project_without_policies")
def test_unchanged_environments_are_answered_from_the_cache(accepted: Project, cache_dir: Path,
                                                             monkeypatch: pytest.MonkeyPatch):
    names = accepted.environment_names()
    first = pipeline.review_project(accepted, names, run=CACHED)
    assert len(review_entries(cache_dir)) == len(names) and not any(e.changed for e in first.environments)
    assert all(e.ray_view is not None for e in first.environments)

    # answered from each entry's summary: the full entries are not even read (nor written again)
    shutil.rmtree(cache_dir / compile_cache.COMPILED.name)
    with monkeypatch.context() as patch:
        forbid_reviewing(patch)
        second = pipeline.review_project(accepted, names, run=CACHED)
    assert second == first
    assert review.format_review(second, "text") == review.format_review(first, "text")
    assert not (cache_dir / compile_cache.COMPILED.name).exists()


@pytest.mark.usefixtures("project_without_policies")
def test_a_changed_layer_reviews_again_what_extends_it(accepted: Project, cache_dir: Path,
                                                       monkeypatch: pytest.MonkeyPatch):
    """The environments' own files keep their bytes: their reviews still depend on base.yaml."""
    names = accepted.environment_names()
    pipeline.review_project(accepted, names, run=CACHED)
    base = accepted.environment_file("base")
    base.write_text(base.read_text() + "# a comment changes no output, but the layer is another one\n")
    with monkeypatch.context() as patch:
        forbid_reviewing(patch)
        with pytest.raises(AssertionError, match="reviewed again"):
            pipeline.review_project(accepted, names, run=CACHED)


@pytest.mark.usefixtures("project_without_policies")
def test_a_changed_environment_is_reviewed_and_its_entry_is_not_reused(accepted: Project, cache_dir: Path,
                                                                       monkeypatch: pytest.MonkeyPatch):
    names = accepted.environment_names()
    pipeline.review_project(accepted, names, run=CACHED)
    edit(accepted.environment_file("dev"), "maxReplicas: 2", "maxReplicas: 3")
    changed = pipeline.review_project(accepted, names, run=CACHED)
    dev = next(e for e in changed.environments if e.name == "dev")
    assert dev.changed and len(review_entries(cache_dir)) == len(names)  # a changed review is never stored
    with monkeypatch.context() as patch:
        forbid_reviewing(patch)
        with pytest.raises(AssertionError, match="reviewed again"):
            pipeline.review_project(accepted, names, run=CACHED)  # dev must be reviewed, not remembered


@pytest.mark.usefixtures("project_without_policies")
def test_what_a_review_depends_on_gives_a_new_key(accepted: Project, cache_dir: Path):
    names = accepted.environment_names()
    pipeline.review_project(accepted, names, run=CACHED)
    keys = {p.name for p in review_entries(cache_dir)}
    (accepted.policies_dir).mkdir(exist_ok=True)
    (accepted.policies_dir / "gpu_budget.cue").write_text(
        "package krc\n\n_maxGpus: 64 @krc(limit=gpu)\n")  # a capacity limit the review shows
    reviewed = pipeline.review_project(accepted, names, run=CACHED)
    assert {p.name for p in review_entries(cache_dir)} - keys  # new entries, under new keys
    prod = next(e for e in reviewed.environments if e.name == "prod-eks-gpu")
    assert [(c.resource, c.maximum) for c in prod.limits] == [("gpu", 64)]


@pytest.mark.usefixtures("project_without_policies")
def test_tampered_or_corrupt_entries_are_ignored(accepted: Project, cache_dir: Path):
    names = accepted.environment_names()
    expected = pipeline.review_project(accepted, names, run=CACHED)
    first, second = review_entries(cache_dir)
    _, _, payload = first.read_bytes().partition(b"\n")
    tampered = json.loads(payload) | {"unchanged": "many"}  # a wrong type, under a checksum that matches it
    review_batch.REVIEWS.write_json(first.name, tampered, cache_dir)
    second.write_bytes(second.read_bytes()[:50])  # truncated
    assert pipeline.review_project(accepted, names, run=CACHED) == expected


def test_no_cache_keeps_no_review(accepted: Project, cache_dir: Path):
    pipeline.review_project(accepted, accepted.environment_names(), run=pipeline.RunOptions(cache=False, workers=1))
    assert review_entries(cache_dir) == []


@pytest.mark.usefixtures("project_without_policies")
def test_every_review_record_survives_the_json_round_trip(accepted: Project):
    """Not only the unchanged reviews the cache keeps: a review full of changes (objects, fields, labels, groups,
    capacity, Ray's view) comes back equal, so the codec holds whatever the records grow."""
    edit(accepted.environment_file("prod-eks-gpu"), "maxReplicas: 10", "maxReplicas: 12")
    edit(accepted.environment_file("dev"), "maxReplicas: 2", "maxReplicas: 3")
    reviewed = pipeline.review_project(accepted, accepted.environment_names(),
                                       run=pipeline.RunOptions(cache=False, workers=1))
    assert any(e.changed for e in reviewed.environments)
    for environment in reviewed.environments:
        data = json.loads(json.dumps(record_json.to_json(environment)))
        assert record_json.from_json(review.EnvironmentReview, data) == environment
