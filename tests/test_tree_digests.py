"""golden/ digests from the stat-signature memo: equal to reading every file, and never fooled by a changed file."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from compiler.cache import signatures
from compiler.diagnostics.problems import KrcError
from compiler.output import folders
from compiler.results import tree_digests
from compiler.results.compiled_records import file_digests


@pytest.fixture
def golden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "golden" / "dev"
    (folder / "manifests").mkdir(parents=True)
    (folder / "manifests" / "raycluster-a.yaml").write_bytes(b"kind: RayCluster\nname: a\n")
    (folder / "crds.lock.yaml").write_bytes(b"crds: []\n")
    return folder


def _expected(folder: Path) -> dict[str, str]:
    """The digests of every file, read here (not through folders.read_file, which `reads` counts)."""
    return file_digests({p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()})


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files tree_digests reads (rather than answering from the memo)."""
    seen: list[str] = []
    original = folders.read_file

    def read_file(entry: os.DirEntry[str]) -> bytes:
        seen.append(entry.name)
        return original(entry)

    monkeypatch.setattr(folders, "read_file", read_file)
    return seen


def test_digests_are_those_of_the_files_read_whether_remembered_or_not(golden: Path, reads: list[str],
                                                                       monkeypatch: pytest.MonkeyPatch):
    expected = _expected(golden)
    assert tree_digests.tree_digests(golden) == expected
    assert tree_digests.tree_digests(golden) == expected
    assert len(reads) == 4  # just written: too young to be remembered (racily clean), so read both times
    monkeypatch.setattr(signatures, "RACY_SECONDS", 0.0)
    reads.clear()
    assert tree_digests.tree_digests(golden) == expected
    assert tree_digests.tree_digests(golden) == expected
    assert sorted(reads) == ["crds.lock.yaml", "raycluster-a.yaml"]  # once each, then from the memo
    assert tree_digests.tree_digests(golden, remember=False) == expected  # --no-cache reads every file


def test_a_changed_file_is_read_again_even_with_its_size_and_time_put_back(golden: Path, reads: list[str],
                                                                           monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(signatures, "RACY_SECONDS", 0.0)
    target = golden / "manifests" / "raycluster-a.yaml"
    tree_digests.tree_digests(golden)
    before = target.stat()
    target.write_bytes(b"kind: RayCluster\nname: b\n")  # same size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))  # same modification time: only ctime moved
    reads.clear()
    assert tree_digests.tree_digests(golden) == _expected(golden)
    assert reads == ["raycluster-a.yaml"]
    (golden / "crds.lock.yaml").unlink()
    (golden / "manifests" / "new.yaml").write_bytes(b"x: 1\n")
    assert tree_digests.tree_digests(golden) == _expected(golden)


def test_a_damaged_memo_is_ignored_and_links_are_refused(golden: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(signatures, "RACY_SECONDS", 0.0)
    expected = tree_digests.tree_digests(golden)
    [memo] = [p for p in (Path(os.environ["KRC_CACHE_DIR"]) / tree_digests.MEMO.name).rglob("*") if p.is_file()]
    memo.write_text('{"format": 1, "folder": "elsewhere", "files": {')
    assert tree_digests.tree_digests(golden) == expected
    (golden / "link.yaml").symlink_to(golden / "crds.lock.yaml")
    with pytest.raises(KrcError, match="is a link, FIFO or device"):
        tree_digests.tree_digests(golden)
