"""rendered/<env>/ folders are known untouched by one status per folder and file (output_stamps): every change a
hand or a tool can make to a folder shows, whether its folders' times were old enough to keep when it was signed
or too recent (then their listings are compared)."""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from compiler.results import output_stamps
from compiler.results.output_stamps import OutputStamps, has_racy_folder, holds_signature, tree_signature

OLD = time.time() - 3600


def _folder(root: Path, old: bool) -> Path:
    folder = root / "rendered" / "dev"
    for name, text in {"manifests/a.yaml": "a: 1\n", "manifests/b.yaml": "b: 2\n", "helm/values.yaml": "v: 3\n",
                       "crds.lock.yaml": "c: 4\n"}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    if old:  # written long before it is signed: its folders' times are kept
        for path in [*folder.rglob("*"), folder]:
            os.utime(path, (OLD, OLD), follow_symlinks=False)
    return folder


def _keeping_times(folder: Path, change: Callable[[], None]) -> None:
    """`change`, with every folder's time put back: a change within the clock tick of the signing."""
    times = {path: path.stat().st_mtime_ns for path in [folder, *folder.rglob("*")] if path.is_dir()}
    change()
    for path, mtime in times.items():
        if path.is_dir() and not path.is_symlink():
            os.utime(path, ns=(mtime, mtime))


CHANGES: dict[str, Callable[[Path], None]] = {
    "edited in place": lambda f: (f / "manifests/a.yaml").write_text("a: 2\n", encoding="utf-8"),
    "appended to": lambda f: (f / "crds.lock.yaml").open("a", encoding="utf-8").write("more: 1\n"),
    "file added": lambda f: (f / "manifests/c.yaml").write_text("c: 1\n", encoding="utf-8"),
    "file removed": lambda f: (f / "manifests/b.yaml").unlink(),
    "file replaced": lambda f: os.replace(f / "manifests/a.yaml", f / "manifests/b.yaml"),
    "folder added": lambda f: (f / "extra").mkdir(),
    "file in a new folder": lambda f: ((f / "extra").mkdir(), (f / "extra/x.yaml").write_text("x\n")),
    "folder made a link": lambda f: (os.rename(f / "helm", f / "helm.old"), os.symlink("helm.old", f / "helm")),
}


@pytest.mark.parametrize("old", [True, False], ids=["times kept", "racy"])
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_every_change_to_a_signed_folder_shows(tmp_path: Path, old: bool, change: str) -> None:
    folder = _folder(tmp_path, old)
    signature = tree_signature(folder)
    assert signature is not None and has_racy_folder(signature) is not old
    assert holds_signature(folder, signature)
    CHANGES[change](folder)
    assert not holds_signature(folder, signature)


@pytest.mark.parametrize("change", ["file added", "file removed", "folder added", "file replaced"])
def test_a_racy_folder_s_listing_shows_a_change_its_time_does_not(tmp_path: Path, change: str) -> None:
    folder = _folder(tmp_path, old=False)
    signature = tree_signature(folder)
    assert signature is not None
    _keeping_times(folder, lambda: CHANGES[change](folder))
    assert not holds_signature(folder, signature)


def test_a_racy_stamp_is_signed_again_once_its_times_can_be_kept(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _folder(tmp_path, old=False)
    cache = tmp_path / "cache"
    stamps = OutputStamps(folder.parent, True, cache)
    stamps.record({"dev": "key-1"})
    assert has_racy_folder(stamps.stamps["dev"][1])
    assert OutputStamps(folder.parent, True, cache).current("dev") == "key-1"  # by its listings, still too recent
    later = time.time_ns() + 3_000_000_000
    monkeypatch.setattr(output_stamps.time, "time_ns", lambda: later)
    checked = OutputStamps(folder.parent, True, cache)
    assert checked.current("dev") == "key-1" and checked.resigned
    checked.record({})  # nothing written this run, the better stamp kept all the same
    kept = OutputStamps(folder.parent, True, cache)
    assert not has_racy_folder(kept.stamps["dev"][1]) and kept.current("dev") == "key-1" and not kept.resigned
    CHANGES["file added"](folder)
    assert OutputStamps(folder.parent, True, cache).current("dev") is None


def _sharing(root: Path, old: bool) -> tuple[Path, Path]:
    """Two environments' folders with a file linked into both (as a render shares a chart's CRDs)."""
    shared = root / "crd.yaml"
    shared.write_text("kind: CustomResourceDefinition\n", encoding="utf-8")
    folders = []
    for name in ("dev", "prod"):
        folder = root / "rendered" / name
        (folder / "crds").mkdir(parents=True)
        os.link(shared, folder / "crds" / "crd.yaml")
        (folder / "own.yaml").write_text(f"name: {name}\n", encoding="utf-8")
        folders.append(folder)
    if old:
        for path in [*(root / "rendered").rglob("*"), *folders]:
            os.utime(path, (OLD, OLD), follow_symlinks=False)
    return folders[0], folders[1]


def _statuses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths os.lstat is asked for from now on."""
    asked: list[str] = []
    real = os.lstat

    def counting(path: str, *args: object, **kwargs: object) -> os.stat_result:
        asked.append(str(path))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(output_stamps.os, "lstat", counting)
    return asked


def test_a_file_shared_by_folders_is_read_once_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dev, prod = _sharing(tmp_path, old=True)
    signatures = [tree_signature(dev), tree_signature(prod)]
    asked = _statuses(monkeypatch)
    linked: dict[int, tuple[int, int]] = {}
    assert all(holds_signature(f, s, linked) for f, s in zip((dev, prod), signatures, strict=True))
    assert [p for p in asked if p.endswith("crd.yaml")] == [f"{dev}/crds/crd.yaml"]
    assert [p for p in asked if p.endswith("own.yaml")] == [f"{dev}/own.yaml", f"{prod}/own.yaml"]


def test_a_write_to_a_shared_file_shows_in_every_folder_linking_it(tmp_path: Path) -> None:
    dev, prod = _sharing(tmp_path, old=True)
    signatures = [tree_signature(dev), tree_signature(prod)]
    (prod / "crds" / "crd.yaml").open("a", encoding="utf-8").write("# edited\n")
    linked: dict[int, tuple[int, int]] = {}
    assert [holds_signature(f, s, linked) for f, s in zip((dev, prod), signatures, strict=True)] == [False, False]


def test_a_shared_file_replaced_in_a_racy_folder_shows(tmp_path: Path) -> None:
    """A racy folder's time says nothing about which inode a name leads to: its shared files are read anyway."""
    dev, prod = _sharing(tmp_path, old=False)
    signatures = [tree_signature(dev), tree_signature(prod)]
    link = prod / "crds" / "crd.yaml"
    info = link.stat()

    def replaced() -> None:  # a copy of the same size and time, under the same name
        copy = prod / "crds" / "copy.yaml"
        copy.write_bytes(link.read_bytes())
        os.utime(copy, ns=(info.st_atime_ns, info.st_mtime_ns))
        os.replace(copy, link)

    _keeping_times(prod, replaced)
    linked: dict[int, tuple[int, int]] = {}
    assert [holds_signature(f, s, linked) for f, s in zip((dev, prod), signatures, strict=True)] == [True, False]
