"""The files a folder already holds, offered as hard links to the folder staged to replace it.

A render that changes one line of every environment (a template edit, krc upgraded, the cache emptied) would
write each environment's folder in full and then delete the old one: thousands of files created, and as many
freed in the main process after every compile, while nothing else runs. A staged file whose bytes the old folder
holds is a second name of the old file instead: nothing is allocated, and removing the old folder only drops the
old names.

Only a file this user owns, a regular file with no other name (so no folder elsewhere shares it), is offered; it
is opened without following links, inside folders opened without following links, and the link is checked to be
that very file afterwards. Anything else, or a file system without hard links, gets the bytes written as before.
The staged folder stays all-or-nothing, and reads the same either way.
"""
from __future__ import annotations

import contextlib
import functools
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK  # a FIFO planted there must not block


@dataclass
class KeptFiles:
    """The folder `root` as it is (it may be absent): `link` gives a staged file its bytes when they are the same."""

    root: str | None  # None: nothing is offered
    _folders: dict[str, int | None]

    @classmethod
    @contextlib.contextmanager
    def of(cls, root: str | None) -> Iterator[KeptFiles]:
        kept = cls(root, {})
        try:
            yield kept
        finally:
            for handle in kept._folders.values():
                if handle is not None:
                    os.close(handle)

    def _folder(self, relative: str) -> int | None:
        """A descriptor of the folder `relative` (posix, "" for the root) below root, every step opened without
        following a link; None when any step is not a real folder."""
        if relative in self._folders:
            return self._folders[relative]
        handle: int | None = None
        try:
            if self.root is None:
                pass
            elif not relative:
                handle = os.open(self.root, _DIRECTORY)
            else:
                parent_path, _, name = relative.rpartition("/")
                parent = self._folder(parent_path)
                if parent is not None:
                    handle = os.open(name, _DIRECTORY, dir_fd=parent)
        except OSError:
            handle = None
        self._folders[relative] = handle
        return handle

    def link(self, relative: str, content: bytes, destination: str) -> bool:
        """Make `destination` (a new path in a folder this run staged) a hard link to root's `relative` when that
        file holds exactly `content`; False (nothing made) otherwise."""
        parent_path, _, name = relative.rpartition("/")
        folder = self._folder(parent_path)
        if folder is None:
            return False
        try:
            handle = os.open(name, _FILE, dir_fd=folder)
        except OSError:
            return False
        try:
            info = os.fstat(handle)
            if not _reusable(info, len(content)) or _read(handle, len(content) + 1) != content:
                return False
        except OSError:
            return False
        finally:
            os.close(handle)
        try:
            os.link(name, destination, src_dir_fd=folder, follow_symlinks=False)
        except OSError:
            return False
        try:
            made = os.lstat(destination)
            if (made.st_dev, made.st_ino) == (info.st_dev, info.st_ino) and stat.S_ISREG(made.st_mode):
                return True
            os.unlink(destination)  # the name was swapped between the read and the link
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(destination)
        return False


def _reusable(info: os.stat_result, size: int) -> bool:
    return (stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and info.st_size == size
            and info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) == _written_mode())


@functools.cache
def _written_mode() -> int:
    """The permissions a file written now gets (0o666 less the umask), so a kept file has the same; read from
    /proc, since setting the umask to learn it would race with other threads. Unknown: nothing is kept."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return -1


def _read(handle: int, limit: int) -> bytes:
    parts: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(handle, left)
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)
