"""Large files of one content object are written once per run and hard-linked after that
(compiler/files/shared_files.py): the chart's CRDs in every rendered/<env>/crds/."""
from __future__ import annotations

import os
from pathlib import Path

from project_support import copy_environment

from compiler import pipeline
from compiler.charts import vendored
from compiler.files.shared_files import SMALLEST_LINKED, SharedFiles
from compiler.output import folders, layout
from compiler.project.paths import Project

LARGE = b"x" * SMALLEST_LINKED


def test_the_same_object_is_linked_an_equal_one_is_written(tmp_path: Path):
    shared = SharedFiles()
    equal = bytes(bytearray(LARGE))  # the same bytes, another object: nothing says it is the chart's
    for name, content in (("a", LARGE), ("b", LARGE), ("c", equal)):
        shared.write(str(tmp_path / name), content)
    assert [(tmp_path / n).read_bytes() == LARGE for n in "abc"] == [True] * 3
    assert os.path.samefile(tmp_path / "a", tmp_path / "b")
    assert not os.path.samefile(tmp_path / "a", tmp_path / "c")


def test_small_files_are_always_written(tmp_path: Path):
    shared, small = SharedFiles(), b"y" * (SMALLEST_LINKED - 1)
    shared.write(str(tmp_path / "a"), small)
    shared.write(str(tmp_path / "b"), small)
    assert os.stat(tmp_path / "a").st_nlink == os.stat(tmp_path / "b").st_nlink == 1


def test_a_first_copy_that_is_gone_or_replaced_is_never_linked(tmp_path: Path):
    """Its staged folder was discarded, or another file took its name: the bytes are written again."""
    shared = SharedFiles()
    shared.write(str(tmp_path / "a"), LARGE)
    (tmp_path / "a").unlink()
    shared.write(str(tmp_path / "b"), LARGE)  # the first copy is gone: written, and now the first copy
    (tmp_path / "b").rename(tmp_path / "moved")
    (tmp_path / "b").write_bytes(b"other")  # same name, another file
    shared.write(str(tmp_path / "c"), LARGE)
    assert (tmp_path / "c").read_bytes() == LARGE and os.stat(tmp_path / "c").st_nlink == 1
    assert (tmp_path / "b").read_bytes() == b"other"


def test_rendered_crds_of_one_chart_are_one_file_on_disk(project: Project):
    copy_environment(project, "dev")  # dev and dev-copy pin the same chart
    names = project.environment_names()
    pipeline.render_to_disk(project, names)
    chart = vendored.load_vendored_chart(project.vendor_dir, "kuberay-operator", "1.7.0")
    first, second = (project.rendered_dir / n / layout.CRDS_DIR for n in ("dev", "dev-copy"))
    for crd in chart.crds:
        assert (second / f"{crd.name}.yaml").read_bytes() == crd.shipped_bytes
        assert os.path.samefile(first / f"{crd.name}.yaml", second / f"{crd.name}.yaml")
    before = folders.read_tree(project.rendered_dir)
    # again, after the first copies' folders were swapped into place: the same bytes, whatever was linked
    project.environment_file("dev").write_text(project.environment_file("dev").read_text() + "\n")
    pipeline.render_to_disk(project, names, pipeline.RunOptions(cache=False))
    assert folders.read_tree(project.rendered_dir) == before


def test_a_changed_environment_leaves_the_folders_sharing_its_crds_alone(project: Project):
    """Re-rendering one environment removes its old links, which changes the shared files' link count and ctime;
    the other folders still hold what krc wrote, so the next render leaves them in place."""
    copy_environment(project, "dev")
    copy_environment(project, "dev-copy")  # dev, dev-copy and dev-copy-copy share the chart's CRD files
    names = project.environment_names()
    pipeline.render_to_disk(project, names)
    changed = project.environment_file("dev-copy-copy")
    changed.write_text(changed.read_text() + "\n")
    pipeline.render_to_disk(project, names)  # dev-copy-copy's folder and its links are replaced
    folders = {name: os.stat(project.rendered_dir / name).st_ino for name in names}
    results = pipeline.render_to_disk(project, names)
    assert not any(r.staged for r in results)
    assert {name: os.stat(project.rendered_dir / name).st_ino for name in names} == folders


def test_a_shared_crd_file_edited_in_place_is_restored_in_every_folder(project: Project):
    """An edit in place reaches every folder linked to the file; each of them is written again."""
    copy_environment(project, "dev")
    names = project.environment_names()
    pipeline.render_to_disk(project, names)
    expected = folders.read_tree(project.rendered_dir)
    shared = project.rendered_dir / "dev" / layout.CRDS_DIR / "rayjobs.ray.io.yaml"
    with shared.open("r+b") as handle:  # in place, as an editor keeping the inode would
        handle.write(b"# edited\n")
    assert (project.rendered_dir / "dev-copy" / layout.CRDS_DIR / "rayjobs.ray.io.yaml").read_bytes().startswith(
        b"# edited")
    pipeline.render_to_disk(project, names)
    assert folders.read_tree(project.rendered_dir) == expected
