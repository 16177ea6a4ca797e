"""Which compiled result each rendered/<env>/ folder holds (OutputStamps): `krc render` leaves alone a folder that
still holds exactly what krc wrote for the environment's current result (compiled_records.result_key: its own
file, every layer it extends and everything else its entry's key covers).

A folder's signature names every folder and file below it. A file is signed by its size, inode and times, so any
write to it shows. A folder is signed by its inode and modification time, which every entry added, removed or
renamed in it changes: checking a signature reads no folder's listing, only one status per folder and file (most
of what a `krc render` of a few changed environments among hundreds costs). A folder changed shortly before it
was signed could change again within the same tick of the file system's clock without its time moving (git's
"racy" entries): its time is not kept, and its listing is compared instead.
"""
from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable, Sequence
from operator import attrgetter
from pathlib import Path
from typing import Any

from ..cache import CacheKind, cache_key
from ..cache.signatures import racy_ns

# one entry per output folder; bump its version when the stamps' layout or what they hold changes (3: no ctime for
# files with several links; 4: folders signed by their times, not their listings; 5: a time not kept is 0)
STAMPS = CacheKind("outputs", 5)
# A folder's time not kept (too recent). Not None: a `null` in the stamps' JSON makes their encoding check that the
# text reads back (jsontext), which cost ten times the encoding of the megabyte 500 folders' stamps take. A folder
# whose time really is 0 is compared by its listing, which is only slower.
_NOT_KEPT = 0
_NAME = attrgetter("name")


def tree_signature(folder: Path) -> list[list[Any]] | None:
    """Every folder (its path ending in "/", the folder itself "") and file below `folder`, in order: a folder
    with its inode and modification time (_NOT_KEPT: too recent to trust), a file with its size, inode and times. A
    file with several links (the chart CRDs a render shares between folders, shared_files) is signed without its
    ctime: removing another folder's link to it changes its link count, hence its ctime, and must not make every
    folder sharing it look touched. Its mtime still changes with any write to it, its inode with any replacement."""
    root = os.fspath(folder)
    try:
        info = os.lstat(root)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        return None
    trusted_before = time.time_ns() - racy_ns()  # younger: signed by its listing (cache/signatures)
    signature: list[list[Any]] = []

    def walk(directory: str, prefix: str, info: os.stat_result) -> None:
        signature.append([prefix, info.st_ino,
                          info.st_mtime_ns if 0 < info.st_mtime_ns < trusted_before else _NOT_KEPT])
        with os.scandir(directory) as found:
            entries = sorted(found, key=_NAME)
        for entry in entries:
            status = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(status.st_mode):
                walk(entry.path, f"{prefix}{entry.name}/", status)
            else:
                signed = [prefix + entry.name, status.st_size, status.st_ino, status.st_mtime_ns]
                signature.append(signed + [status.st_ctime_ns] if status.st_nlink == 1 else signed)

    walk(root, "", info)
    return signature


def holds_signature(folder: Path, signature: Any, linked: dict[int, tuple[int, int]] | None = None) -> bool:
    """Whether `folder` is still as `signature` (tree_signature's) describes it: one status per folder and file
    named, and the listing of a folder whose time was too recent to keep. (The hot loop of a warm render: fields
    are compared in place, and paths joined by hand, which also keeps a stored path inside the folder.)

    `linked`: the files with several links (the chart CRDs every folder shares) found as signed by earlier checks
    of the same run, inode -> (size, mtime). Such a file in a folder whose kept time held is not read again: the
    folder's time held, so its names still lead to the inodes they did, and the inode's status is one for all its
    links (a write to any of them shows in the first). At 500 folders that is 2,000 of 14,000 statuses."""
    if not isinstance(signature, list) or not signature or not isinstance(signature[0], list) \
            or signature[0][:1] != [""]:
        return False
    root = os.fspath(folder)
    lstat, is_dir = os.lstat, stat.S_ISDIR
    held: set[str] = set()  # the folders whose kept time held
    linked = {} if linked is None else linked
    try:
        for entry in signature:
            path = entry[0]
            if path == "" or path[-1] == "/":
                status = lstat(f"{root}/{path[:-1]}" if path else root)  # the folder, not a link's
                if len(entry) != 3 or not is_dir(status.st_mode) or status.st_ino != entry[1]:
                    return False
                if entry[2] == _NOT_KEPT:
                    if sorted(os.listdir(f"{root}/{path}")) != _listed(signature, path):
                        return False
                elif status.st_mtime_ns != entry[2]:
                    return False
                else:
                    held.add(path)
                continue
            shared = len(entry) == 4
            if shared and linked.get(entry[2]) == (entry[1], entry[3]) and path[:path.rfind("/") + 1] in held:
                continue
            status = lstat(f"{root}/{path}")
            if is_dir(status.st_mode) or entry[1] != status.st_size or entry[2] != status.st_ino \
                    or entry[3] != status.st_mtime_ns:
                return False
            if len(entry) != (5 if status.st_nlink == 1 else 4) \
                    or (len(entry) == 5 and entry[4] != status.st_ctime_ns):
                return False
            if shared:
                linked[entry[2]] = (entry[1], entry[3])
    except (OSError, TypeError, AttributeError, IndexError):  # gone, or not a signature this krc writes
        return False
    return True


def _listed(signature: list[list[Any]], prefix: str) -> list[str]:
    """The names the signature holds directly in the folder `prefix`."""
    names = []
    for entry in signature:
        path = entry[0]
        if path != prefix and path.startswith(prefix):
            rest = path[len(prefix):]
            if "/" not in rest.rstrip("/"):
                names.append(rest.rstrip("/"))
    return sorted(names)


def has_racy_folder(signature: list[list[Any]]) -> bool:
    return any((entry[0] == "" or entry[0].endswith("/")) and entry[2] == _NOT_KEPT for entry in signature)


class OutputStamps:
    """Which result key each rendered/<env>/ folder holds, with the folder's signature when krc wrote it. A
    folder whose signature still matches holds exactly what krc wrote, so an unchanged result need not be
    written again. Kept in the cache dir, per output folder; without the cache, nothing is known."""

    def __init__(self, target: Path, enabled: bool, folder: Path | None = None):
        self.target = target
        self.enabled = enabled
        self.key = cache_key(str(target.resolve()))
        self.folder = folder
        self.stamps: dict[str, Any] = {}
        self.resigned = False  # a folder's racy signature was taken again once its times could be trusted
        self.linked: dict[int, tuple[int, int]] = {}  # holds_signature's shared files, found as signed in this run
        if enabled:
            loaded = STAMPS.read_json(self.key, folder)
            if isinstance(loaded, dict) and isinstance(loaded.get("stamps"), dict):
                self.stamps = loaded["stamps"]

    def current(self, name: str) -> str | None:
        """The key rendered/<name>/ holds, if it was not touched since krc wrote it."""
        stamp = self.stamps.get(name)
        if not self.enabled or not isinstance(stamp, list) or len(stamp) != 2:
            return None
        key, signature = stamp
        if not isinstance(key, str) or not holds_signature(self.target / name, signature, self.linked):
            return None
        if has_racy_folder(signature):  # untouched since: sign it again, by times this time if they are old enough
            again = tree_signature(self.target / name)
            if again is not None and not has_racy_folder(again):
                self.stamps[name] = [key, again]
                self.resigned = True
        return key

    def checked_in_background(self, names: Sequence[str]) -> Callable[[], dict[str, str]]:
        """`current` of each of `names`, worked out on a thread of its own while this one goes on (its statuses are
        system calls, made without Python's lock): the function given back waits for it and gives the names whose
        folder holds its key, with the key. Nothing else may use these stamps meanwhile."""
        held: dict[str, str] = {}
        failed: list[BaseException] = []

        def check() -> None:
            try:
                for name in names:
                    key = self.current(name)
                    if key is not None:
                        held[name] = key
            except BaseException as err:  # handed to the caller
                failed.append(err)

        worker = threading.Thread(target=check, name="krc-output-stamps", daemon=True)
        worker.start()

        def answers() -> dict[str, str]:
            worker.join()
            if failed:
                raise failed[0]
            return held

        return answers

    def record(self, keys: dict[str, str]) -> None:
        """Stamp the folders just written (those whose key was current already keep their stamp)."""
        if not self.enabled or not (keys or self.resigned):
            return
        for name, key in keys.items():
            signature = tree_signature(self.target / name)
            if signature is None:
                self.stamps.pop(name, None)
            else:
                self.stamps[name] = [key, signature]
        STAMPS.write_json(self.key, {"stamps": self.stamps}, self.folder)
