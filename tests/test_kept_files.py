"""A staged rendered/<env>/ file whose bytes the folder already holds is a hard link to the old file
(compiler/files/kept_files.py): a render that changes a line of every environment neither writes nor deletes the
files that stayed the same."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from project_support import copy_environment

from compiler import pipeline
from compiler.files.kept_files import KeptFiles
from compiler.output import folders


def _old_folder(tmp_path: Path) -> Path:
    old = tmp_path / "rendered" / "dev"
    (old / "manifests").mkdir(parents=True)
    (old / "manifests" / "same.yaml").write_bytes(b"kind: Same\n")
    (old / "manifests" / "changed.yaml").write_bytes(b"kind: Before\n")
    return old


def test_a_file_of_the_same_bytes_becomes_a_link_to_the_old_one(tmp_path: Path):
    old = _old_folder(tmp_path)
    files = {"manifests/same.yaml": b"kind: Same\n", "manifests/changed.yaml": b"kind: After\n",
             "manifests/new.yaml": b"kind: New\n"}
    stage = folders.stage_tree(old, files, keep_unchanged=True)
    assert os.path.samefile(stage / "manifests" / "same.yaml", old / "manifests" / "same.yaml")
    assert not os.path.samefile(stage / "manifests" / "changed.yaml", old / "manifests" / "changed.yaml")
    folders.commit_staged([(old, stage)])
    assert folders.read_tree(old) == files
    assert os.stat(old / "manifests" / "same.yaml").st_nlink == 1  # the old name went with the old folder


def test_golden_and_other_callers_write_every_file(tmp_path: Path):
    """Without keep_unchanged (golden/): nothing of the old folder is touched, not even a change time."""
    old = _old_folder(tmp_path)
    before = os.stat(old / "manifests" / "same.yaml").st_ctime_ns
    stage = folders.stage_tree(old, {"manifests/same.yaml": b"kind: Same\n"})
    assert not os.path.samefile(stage / "manifests" / "same.yaml", old / "manifests" / "same.yaml")
    assert os.stat(old / "manifests" / "same.yaml").st_ctime_ns == before


def test_a_file_with_other_names_or_other_permissions_is_written(tmp_path: Path):
    old = _old_folder(tmp_path)
    os.link(old / "manifests" / "same.yaml", tmp_path / "elsewhere.yaml")  # a name outside the folder
    (old / "other.yaml").write_bytes(b"x")
    os.chmod(old / "other.yaml", 0o600)
    stage = folders.stage_tree(old, {"manifests/same.yaml": b"kind: Same\n", "other.yaml": b"x"},
                               keep_unchanged=True)
    assert not os.path.samefile(stage / "manifests" / "same.yaml", tmp_path / "elsewhere.yaml")
    assert not os.path.samefile(stage / "other.yaml", old / "other.yaml")
    assert (stage / "other.yaml").read_bytes() == b"x"


def test_links_in_the_old_folder_are_never_followed(tmp_path: Path):
    """A link planted in rendered/ (to a folder or a file elsewhere with the very bytes krc writes) is not read
    through nor linked to: the staged files are written."""
    outside = tmp_path / "outside"
    (outside / "manifests").mkdir(parents=True)
    (outside / "manifests" / "same.yaml").write_bytes(b"kind: Same\n")
    (outside / "file.yaml").write_bytes(b"kind: File\n")
    old = tmp_path / "rendered" / "dev"
    old.mkdir(parents=True)
    (old / "manifests").symlink_to(outside / "manifests")
    (old / "file.yaml").symlink_to(outside / "file.yaml")
    files = {"manifests/same.yaml": b"kind: Same\n", "file.yaml": b"kind: File\n"}
    with KeptFiles.of(str(old)) as kept:
        assert not kept.link("manifests/same.yaml", files["manifests/same.yaml"], str(tmp_path / "a"))
        assert not kept.link("file.yaml", files["file.yaml"], str(tmp_path / "b"))
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    stage = folders.stage_tree(old, files, keep_unchanged=True)
    assert folders.read_tree(stage) == files
    assert os.stat(outside / "manifests" / "same.yaml").st_nlink == os.stat(outside / "file.yaml").st_nlink == 1


def test_an_absent_folder_offers_nothing(tmp_path: Path):
    with KeptFiles.of(str(tmp_path / "absent")) as kept:
        assert not kept.link("a.yaml", b"", str(tmp_path / "a"))
    with KeptFiles.of(None) as kept:
        assert not kept.link("a.yaml", b"", str(tmp_path / "a"))


def test_a_render_that_changes_every_environment_keeps_the_files_that_stayed(project):
    """A template edit reaching every environment: each folder is replaced, its unchanged files by the same
    inodes, and rendered/ reads exactly as a render from nothing writes it."""
    copy_environment(project, "dev")
    names = project.environment_names()
    pipeline.render_to_disk(project, names)
    chart_file = sorted((project.rendered_dir / "dev" / "chart").iterdir())[0]
    inode = os.stat(chart_file).st_ino
    core = project.root / "templates" / "objects" / "core.jsonnet"
    core.write_text(core.read_text().replace("'-20',", "'-20', 'example.com/edited': 'yes',", 1))
    results = pipeline.render_to_disk(project, names)
    assert {r.name for r in results if r.staged} == set(names)
    assert os.stat(chart_file).st_ino == inode and os.stat(chart_file).st_nlink == 1
    assert b"example.com/edited" in b"".join(
        p.read_bytes() for p in (project.rendered_dir / "dev" / "manifests").iterdir())
    written = folders.read_tree(project.rendered_dir)
    shutil.rmtree(project.rendered_dir)
    pipeline.render_to_disk(project, names, pipeline.RunOptions(cache=False))
    assert folders.read_tree(project.rendered_dir) == written
