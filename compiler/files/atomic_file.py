"""Writing one file so that readers see the old content or the new, never a part: written beside its target,
then renamed over it."""
from __future__ import annotations

import itertools
import os
from pathlib import Path

_MADE_MODE = 0o600  # what mkstemp makes a file with, whatever the umask


def write_atomically(path: Path, content: bytes, mode: int = 0o644, parent_made: bool = False) -> None:
    """`parent_made`: the caller made sure the folder is there (the cache, which checks every folder anyway)."""
    if not parent_made:
        path.parent.mkdir(parents=True, exist_ok=True)
    stage, handle = _staged(path)
    try:
        with memoryview(content) as rest:
            while rest:
                rest = rest[os.write(handle, rest):]
        os.close(handle)
        handle = -1
        if mode != _MADE_MODE:
            os.chmod(stage, mode)
        os.replace(stage, path)
    except BaseException:
        if handle >= 0:
            os.close(handle)
        Path(stage).unlink(missing_ok=True)
        raise


def _staged(path: Path) -> tuple[str, int]:
    """A new file beside `path`, open for writing, made as mkstemp makes one (created, never opened, never through a
    link; mode 0600) under a name no other writer picks: this process's id and its own count. A cold lint writes
    thousands of cache entries, and mkstemp's random names and file objects were a third of each write's cost."""
    for _ in range(_ATTEMPTS):  # a name taken: a file a killed process of the same id left
        stage = os.path.join(path.parent, f".{path.name}.new-{os.getpid()}-{next(_STAGED)}")
        try:
            return stage, os.open(stage, _STAGE_FLAGS, _MADE_MODE)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free name to write {path} through")


_STAGE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_STAGED = itertools.count()
_ATTEMPTS = 100
