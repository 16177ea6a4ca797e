"""Environment files are hashed once, then known by their signatures (results/input_digests.py): a file that kept
its signature gets the remembered digest, any write gives a new one, and a signature too young is never kept."""
from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest

from compiler.project.paths import Project
from compiler.results import input_digests
from compiler.results.compile_cache import CompileCache
from compiler.results.input_digests import InputDigests


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def later(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file written in the test is older than the racy window, as files written before a command are."""
    now = time.time_ns() + 3_000_000_000
    monkeypatch.setattr(input_digests.time, "time_ns", lambda: now)


@pytest.mark.usefixtures("later")
def test_a_file_that_kept_its_signature_is_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = tmp_path / "project" / "environments" / "dev.yaml"
    env.parent.mkdir(parents=True)
    env.write_bytes(b"namespace: a\n")
    first = InputDigests(str(tmp_path / "project"), True, tmp_path / "cache")
    assert first.digest(str(env)) == _sha(b"namespace: a\n")
    first.save()
    read: list[str] = []
    real = input_digests.path_digest
    monkeypatch.setattr(input_digests, "path_digest", lambda path: read.append(path) or real(path))
    second = InputDigests(str(tmp_path / "project"), True, tmp_path / "cache")
    assert second.digest(str(env)) == _sha(b"namespace: a\n") and read == []
    env.write_bytes(b"namespace: b\n")  # the same size: its times and change time differ
    third = InputDigests(str(tmp_path / "project"), True, tmp_path / "cache")
    assert third.digest(str(env)) == _sha(b"namespace: b\n") and read == [str(env)]


def test_a_signature_too_young_is_not_remembered(tmp_path: Path) -> None:
    env = tmp_path / "dev.yaml"
    env.write_bytes(b"namespace: a\n")
    digests = InputDigests(str(tmp_path), True, tmp_path / "cache")
    assert digests.digest(str(env)) == _sha(b"namespace: a\n")
    digests.save()
    known = InputDigests(str(tmp_path), True, tmp_path / "cache").known
    assert known == {str(env): [None] * 5 + [_sha(b"namespace: a\n")]}  # its digest only: hashed next time too


@pytest.mark.usefixtures("later")
def test_without_the_cache_nothing_is_kept_and_a_missing_file_has_no_digest(tmp_path: Path) -> None:
    env = tmp_path / "dev.yaml"
    env.write_bytes(b"namespace: a\n")
    digests = InputDigests(str(tmp_path), False, tmp_path / "cache")
    assert digests.digest(str(env)) == _sha(b"namespace: a\n") and digests.digest(str(tmp_path / "gone")) == ""
    digests.save()
    assert not (tmp_path / "cache").exists()
    other_root = InputDigests(str(tmp_path / "elsewhere"), True, tmp_path / "cache")
    assert other_root.known == {}


@pytest.mark.usefixtures("later", "private_cache")
def test_the_environments_edited_since_the_last_command_are_known_by_their_signatures(project: Project) -> None:
    """What Context.of asks before reading any destination: the files it had to hash, as the ones to compile."""
    names = project.environment_names()
    first = CompileCache(project)
    assert sorted(first.edited_environments(names)) == sorted(names)  # nothing remembered yet
    first.remember_digests()
    assert CompileCache(project).edited_environments(names) == []
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    assert CompileCache(project).edited_environments(names) == ["dev"]
    assert CompileCache(project, enabled=False).edited_environments(names) == []  # without the cache: unknown


@pytest.mark.usefixtures("private_cache")
def test_a_file_written_just_now_is_edited_only_when_its_bytes_changed(project: Project) -> None:
    """A young file is hashed by every command (its signature is not kept) but counts as edited only when its
    bytes differ from the last command's: a second render right after an edit does not start the engine for it."""
    names = project.environment_names()
    first = CompileCache(project)
    first.edited_environments(names)
    first.remember_digests()
    assert CompileCache(project).edited_environments(names) == []  # hashed again (young), the same bytes
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    edited = CompileCache(project)
    assert edited.edited_environments(names) == ["dev"]
    edited.remember_digests()
    assert CompileCache(project).edited_environments(names) == []


@pytest.mark.usefixtures("later")
def test_the_edited_files_are_found_in_order_up_to_a_number_each_digested_once_per_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """edited_among (CompileCache.edited_environments, and the engine started ahead, which stops past a few): the
    files new or holding other bytes than the memo, in the order given; each file is hashed once per instance (a
    run), however often it is asked for."""
    files = [tmp_path / f"{name}.yaml" for name in ("a", "b", "c", "d")]
    for file in files:
        file.write_bytes(b"x: 1\n")
    first = InputDigests(str(tmp_path), True, tmp_path / "cache")
    assert first.edited_among(str(f) for f in files) == [str(f) for f in files]  # none known yet
    first.save()
    files[1].write_bytes(b"x: 2\n")
    files[3].write_bytes(b"x: 3\n")
    read: list[str] = []
    real = input_digests.path_digest
    monkeypatch.setattr(input_digests, "path_digest", lambda path: read.append(path) or real(path))
    second = InputDigests(str(tmp_path), True, tmp_path / "cache")
    assert second.edited_among([str(f) for f in files]) == [str(files[1]), str(files[3])]
    assert second.edited_among([str(f) for f in files], most=1) == [str(files[1])]
    assert second.digest(str(files[3])) == _sha(b"x: 3\n") and read == [str(files[1]), str(files[3])]
