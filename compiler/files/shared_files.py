"""Large files of the same bytes written once per run and hard-linked after that.

Every environment's rendered/<env>/crds/ holds its chart's CRDs as shipped: 4 MB for KubeRay, 2 GB over 500
environments when each copy is written in full (most of a cold `krc render`'s system time, and disk space).
Within one process the chart's CRD bytes are one object per CRD (`Crd.shipped_bytes`), so a later file of that
very object becomes a hard link to the first copy staged in this run. A link is only made to the file this run
wrote (same device, inode and size, still a regular file); anything else, or a file system without hard links,
gets the bytes written as before. The files read the same either way; a staged folder stays all-or-nothing.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

# Smaller files are written: a link saves little there, and small contents are rarely one shared object
SMALLEST_LINKED = 64 * 1024


@dataclass(frozen=True)
class _Written:
    content: bytes  # held, so the id it is found by is never reused by another object during the run
    path: str
    device: int
    inode: int


@dataclass
class SharedFiles:
    """The first copy of each large content object written in this run, by the object's id."""

    _first: dict[int, _Written] = field(default_factory=dict)

    def write(self, path: str, content: bytes) -> None:
        """`path` (new) holds `content` afterwards: a hard link to an earlier copy of the same object, else written."""
        if len(content) >= SMALLEST_LINKED:
            known = self._first.get(id(content))
            if known is not None and known.content is content and _linked(known, path):
                return
        with open(path, "xb") as stream:
            stream.write(content)
        if len(content) >= SMALLEST_LINKED:
            info = os.lstat(path)
            self._first[id(content)] = _Written(content, path, info.st_dev, info.st_ino)


def _linked(known: _Written, path: str) -> bool:
    try:
        info = os.lstat(known.path)
        if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino, info.st_size) != \
                (known.device, known.inode, len(known.content)):
            return False  # not the copy this run wrote (its staged folder was discarded or swapped in)
        os.link(known.path, path, follow_symlinks=False)
    except OSError:  # gone, too many links, or a file system without hard links: written instead
        return False
    return True
