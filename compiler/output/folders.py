"""Folders written all-or-nothing: staged beside their targets, swapped in atomically, debris cleaned.

The write protocol (README "Security model"): one lock file per project serializes every writing run; each
folder is written in full beside its target, then swapped in with one atomic exchange (Linux renameat2
RENAME_EXCHANGE), so after a kill at any instant a folder is entirely old or entirely new; the next run removes
the staging debris. Where the exchange is unavailable, the old folder is moved aside first and the next run moves
it back if the kill came between the two renames.
"""
from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import shutil
import signal
import tempfile
from pathlib import Path

from ..diagnostics.problems import KrcError, Location
from ..files.atomic_file import write_atomically
from ..files.kept_files import KeptFiles
from ..files.shared_files import SharedFiles
from ..project.lock import project_lock
from ..project.paths import Project, shown_name
from ..settings import variables

# Debris of an interrupted run: staged folders and folders moved aside, beside their targets.
_STAGED = re.compile(r"^\.(?P<target>.+)\.(?P<state>new|old)-[A-Za-z0-9_]+$")
# Test hook: SIGKILL this process just before write step N (1-based) of replace_trees; see tests/security/.
KILL_AT_STEP_VARIABLE = "KRC_TEST_KILL_AT_STEP"
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
Files = dict[str, bytes]  # relative posix path -> content


def tree_files(folder: Path) -> list[tuple[str, os.DirEntry[str]]]:
    """Every file below `folder` as (path inside it, directory entry), unsorted; an absent folder has none.
    os.scandir, not Path.rglob: `krc check` and `krc diff` go through hundreds of golden folders and pathlib's
    overhead was most of their time. Links are refused, never followed: golden/ is committed by many people and
    must not make krc read files elsewhere; FIFOs and devices are refused (a read would block)."""
    top = str(folder)
    for step in (os.path.dirname(top), top):  # golden/ and golden/<env>
        if os.path.islink(step):
            shown = f"{os.path.basename(os.path.dirname(step))}/{os.path.basename(step)}"
            raise KrcError(f"{shown} is a symbolic link; golden/ and rendered/ hold real folders only: remove it",
                           Location(shown))
    if not os.path.isdir(top):
        return []
    found: list[tuple[str, os.DirEntry[str]]] = []
    folders = [(top, "")]
    while folders:
        directory, prefix = folders.pop()
        with os.scandir(directory) as entries:
            for entry in entries:  # a link is neither a folder nor a file here: never followed
                if entry.is_dir(follow_symlinks=False):
                    folders.append((entry.path, f"{prefix}{entry.name}/"))
                elif entry.is_file(follow_symlinks=False):
                    found.append((prefix + entry.name, entry))
                else:
                    raise KrcError(f"{entry.path} is a link, FIFO or device; golden/ and rendered/ hold plain files "
                                   "only: remove it", Location(entry.path))
    return found


def read_file(entry: os.DirEntry[str]) -> bytes:
    try:
        with open(entry.path, "rb") as handle:
            return handle.read()
    except OSError as err:
        raise KrcError(f"cannot read {entry.path}: {err.strerror}; check its permissions") from None


def read_tree(folder: Path) -> Files:
    """Every file below `folder` (see tree_files), sorted by path."""
    return dict(sorted((relative, read_file(entry)) for relative, entry in tree_files(folder)))


_SHARED = SharedFiles()  # per process, not per job: a worker stages many jobs' chart CRDs (shared_files)


def stage_tree(target: Path, files: Files, keep_unchanged: bool = False) -> Path:
    """Write one folder in full beside `target` (not yet in place); `commit_staged` swaps it in. A large content
    object this process already staged is hard-linked to that copy (shared_files). `keep_unchanged` (rendered/,
    krc's own output): a file `target` already holds with the same bytes is hard-linked to it (kept_files); a
    link moves the old file's change time even if the run then fails, which golden/'s files are spared."""
    for relative in files:
        _safe_relative(relative)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _Steps.step()
        stage = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.new-"))
    except OSError as err:
        raise write_error(target.parent, err) from None
    try:
        top = str(stage)
        for folder in sorted({r.rpartition("/")[0] for r in files} - {""}):  # each once, parents first
            os.makedirs(os.path.join(top, folder), exist_ok=True)
        with KeptFiles.of(str(target) if keep_unchanged else None) as kept:
            for relative, content in files.items():
                path = os.path.join(top, relative)
                _Steps.step()
                if not kept.link(relative, content, path):
                    _SHARED.write(path, content)
        os.chmod(stage, 0o755)
    except BaseException as err:
        shutil.rmtree(stage, ignore_errors=True)
        if isinstance(err, OSError):
            raise write_error(target.parent, err) from None
        raise
    return stage


def discard_staged(staged: list[tuple[Path, Path]]) -> None:
    for _, stage in staged:
        shutil.rmtree(stage, ignore_errors=True)


def commit_staged(staged: list[tuple[Path, Path]]) -> None:
    """Swap every staged folder into place (call only once everything was staged), each with one atomic
    exchange: after a kill at any instant a folder is entirely old or entirely new."""
    try:
        for target, stage in staged:
            _Steps.step()
            if not target.exists():
                os.rename(stage, target)
            elif _exchange(stage, target):
                _Steps.step()
                shutil.rmtree(stage)  # now the old folder
            else:
                old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.old-"))
                os.rmdir(old)
                os.replace(target, old)
                _Steps.step()
                os.replace(stage, target)
                _Steps.step()
                shutil.rmtree(old)
    except OSError as err:
        raise write_error(staged[0][0].parent if staged else Path("."), err) from None


class _Steps:
    """Counts write steps, for the fault-injection test hook (KRC_TEST_KILL_AT_STEP)."""

    taken = 0

    @classmethod
    def step(cls) -> None:
        cls.taken += 1
        kill_at = variables.value(KILL_AT_STEP_VARIABLE)
        if kill_at.isdigit() and cls.taken == int(kill_at):
            os.kill(os.getpid(), signal.SIGKILL)


def steps_taken() -> int:
    """Write steps of the last replace_trees (for the fault-injection tests)."""
    return _Steps.taken


def write_error(path: Path, err: OSError) -> KrcError:
    if err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        fix = "free disk space (or raise the quota) and run again"
    elif err.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        fix = "make the folder writable (or run where it is) and run again"
    else:
        fix = "fix the folder and run again"
    return KrcError(f"cannot write in {path}: {err.strerror}; nothing was changed: {fix}")


def _exchange(first: Path, second: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE); False where the system cannot."""
    libc = _libc()
    if libc is None:
        return False
    if libc.renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(second))


_LIBC: list[ctypes.CDLL | None] = []


def _libc() -> ctypes.CDLL | None:
    if not _LIBC:
        try:
            libc: ctypes.CDLL | None = ctypes.CDLL(None, use_errno=True)
            if not hasattr(libc, "renameat2"):
                libc = None
        except OSError:
            libc = None
        _LIBC.append(libc)
    return _LIBC[0]


def clean_debris(parent: Path) -> None:
    """Remove what an interrupted run left beside its targets, restoring a folder moved aside but not yet
    replaced (the fallback protocol's window). Called under the project lock."""
    if not parent.is_dir():
        return
    for entry in sorted(parent.iterdir()):
        match = _STAGED.match(entry.name)
        if not match or entry.is_symlink() or not entry.is_dir():
            continue
        target = parent / match["target"]
        if match["state"] == "old" and not target.exists():
            os.replace(entry, target)  # the kill came between moving the old folder aside and the swap
        else:
            shutil.rmtree(entry)


def _safe_relative(relative: str) -> None:
    parts = relative.split("/")
    if relative.startswith("/") or any(p in ("", ".", "..") or not p.isprintable() for p in parts):
        raise KrcError(f"refusing to write the file name '{shown_name(relative)}'; output names come from kinds and "
                       "object names only")


def replace_trees(trees: dict[Path, Files], project: Project | None = None) -> None:
    """Write every folder in full beside its target, then swap each into place.

    Everything is written before anything is replaced, so a failure leaves the old folders untouched. With
    `project`, the run holds the project's lock, every target must be a real folder inside the project, and the
    debris of interrupted runs is cleaned first.
    """
    for files in trees.values():
        for relative in files:
            _safe_relative(relative)
    with project_lock(project) if project is not None else contextlib.nullcontext():
        if project is not None:
            for target in trees:
                project.checked_output_dir(target)
        try:
            _replace_trees(trees)
        except OSError as err:
            raise write_error(next(iter(trees), Path("./x")).parent, err) from None


def _replace_trees(trees: dict[Path, Files]) -> None:
    _Steps.taken = 0  # steps count per run
    for parent in dict.fromkeys(target.parent for target in trees):
        clean_debris(parent)
    staged: list[tuple[Path, Path]] = []
    try:
        for target, files in trees.items():
            staged.append((target, stage_tree(target, files)))
    except BaseException:
        discard_staged(staged)
        raise
    commit_staged(staged)


def replace_file(path: Path, content: bytes) -> None:
    """Write one file beside its target, then swap it into place (readers see the old or the new file)."""
    write_atomically(path, content)
