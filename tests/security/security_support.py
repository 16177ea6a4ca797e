"""Helpers for the hostile-input tests: trees seen whole, links included, crafted chart repositories, CLI runs."""
from __future__ import annotations

import hashlib
import io
import os
import shutil
import stat
import tarfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from click.testing import CliRunner, Result

from compiler.cli import main

# What a hostile run must leave untouched: the project's outputs and caches, and a folder outside the project.
GUARDED = ("golden", "rendered", "vendor", "environments", "templates")


def tree_state(folder: Path) -> tuple[tuple[str, bytes], ...]:
    """Every entry below `folder`: names, types, link targets, and each file's identity and last change (links are
    not followed, so a link that appears or changes is seen). A file is named by its inode, size, and modification
    and change times: a write of any kind, even of the same bytes, moves the change time (ctime), which no caller
    can set back, and a replacement brings another inode; so this sees everything the file's bytes would show,
    without reading the megabytes of rendered/ twice per case."""
    if not folder.exists() and not folder.is_symlink():
        return (("", b"absent"),)
    entries = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            info = os.lstat(path)
            relative = os.path.relpath(path, folder)
            if stat.S_ISLNK(info.st_mode):
                entries.append((relative, b"link:" + os.readlink(path).encode("utf-8", "surrogateescape")))
            elif stat.S_ISREG(info.st_mode):
                identity = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, stat.S_IMODE(info.st_mode))
                entries.append((relative, b"file:" + repr(identity).encode()))
            else:
                entries.append((relative, f"mode:{stat.S_IFMT(info.st_mode)}".encode()))
    return tuple(entries)


def tree_digest(folder: Path) -> str:
    """A digest of tree_state(folder)."""
    digest = hashlib.sha256()
    for relative, entry in tree_state(folder):
        digest.update(relative.encode("utf-8", "surrogateescape") + b"\0" + entry)
    return digest.hexdigest()


def snapshot(root: Path, outside: Path) -> dict[str, tuple[tuple[str, bytes], ...]]:
    """What a hostile run must leave as it was, kept whole: comparing the bytes costs less than hashing them (the
    rendered/ CRDs are megabytes, and each corpus case reads every guarded tree twice)."""
    out = {part: tree_state(root / part) for part in GUARDED}
    out["outside"] = tree_state(outside)
    return out


def changed_parts(before: dict[str, tuple[tuple[str, bytes], ...]], root: Path, outside: Path) -> list[str]:
    after = snapshot(root, outside)
    return [part for part in before if after[part] != before[part]]


def run(root: Path, args: list[str], env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["--project", str(root), *args], env=env or {})


# ---- crafted chart archives and repositories -------------------------------------------------------------------

@dataclass(frozen=True)
class Member:
    name: str
    data: bytes = b""
    kind: bytes = tarfile.REGTYPE
    link: str = ""
    size: int | None = None  # declared size, when it should differ from len(data)


def tgz(members: list[Member]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for member in members:
            info = tarfile.TarInfo(member.name)
            info.type = member.kind
            info.linkname = member.link
            info.size = len(member.data) if member.kind == tarfile.REGTYPE else 0
            tar.addfile(info, io.BytesIO(member.data) if member.kind == tarfile.REGTYPE else None)
    return buffer.getvalue()


def chart_members(extra: list[Member] | None = None, root: str = "kuberay-operator") -> list[Member]:
    return [Member(f"{root}/Chart.yaml", b"apiVersion: v2\nname: kuberay-operator\nversion: 1.7.0\n"),
            Member(f"{root}/values.yaml", b"{}\n"), *(extra or [])]


def chart_repository(folder: Path, archive: bytes, version: str = "1.7.0", url: str | None = None) -> str:
    """A file:// Helm repository at `folder` listing one kuberay-operator version; returns its URL."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"kuberay-operator-{version}.tgz"
    (folder / name).write_bytes(archive)
    index = {"apiVersion": "v1", "entries": {"kuberay-operator": [
        {"name": "kuberay-operator", "version": version, "urls": [url or name],
         "digest": hashlib.sha256(archive).hexdigest()}]}}
    (folder / "index.yaml").write_text(yaml.safe_dump(index))
    return folder.as_uri()


def unvendor(root: Path, version: str = "1.7.0") -> None:
    """Forget a vendored chart, so the next `krc vendor` downloads it."""
    (root / "vendor" / "charts" / f"kuberay-operator-{version}.tgz").unlink()
    lock_path = root / "vendor" / "charts.lock.yaml"
    lock = yaml.safe_load(lock_path.read_text())
    lock["charts"] = [c for c in lock["charts"] if c["version"] != version]
    lock_path.write_text(yaml.safe_dump(lock))


# ---- the case table ---------------------------------------------------------------------------------------------

Setup = Callable[[Path, Path], "dict[str, str] | None"]  # (project root, outside folder) -> extra env vars


@dataclass(frozen=True)
class Case:
    id: str
    setup: Setup
    args: tuple[str, ...]
    exit: int
    where: str  # a substring the error line must contain: its file:line, or "krc" for errors without a file
    says: str = ""  # a substring of the message
    seconds: float = 20.0  # what the run may take at most (bounded work)
    env: dict[str, str] = field(default_factory=dict)
    # as a `krc` process of its own: where a bound leaves work behind that ends only when krc exits (an abandoned
    # Jsonnet evaluation), which in this process would run on through the tests after it
    process: bool = False


def replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def copy_tree(source: Path, destination: Path) -> None:
    shutil.copytree(source, destination, symlinks=True)
