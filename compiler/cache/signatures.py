"""A file's signature, as git's index keeps it: what tells krc a file is unchanged without reading it.

Device, inode, size, modification and change times (ns). Every write to a file sets its change time, which no user
can set back, so a changed file always shows. A file that changed within the same clock tick as it was read would
keep its signature, so a signature younger than RACY_SECONDS is never remembered (git's "racily clean" rule).
The memos built on it: golden/'s digests (results/tree_digests.py), the project's input files' digests
(results/input_digests.py), the review memo (pipeline/review_memo.py) and krc's own fingerprint (digests.py).
"""
from __future__ import annotations

import os
from collections.abc import Sequence

RACY_SECONDS = 2.0


def file_signature(stat: os.stat_result) -> list[int]:
    """What a file's signature is made of: device, inode, size, modification and change times (ns)."""
    return [stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]


def settled(signature: Sequence[int], now_ns: int) -> bool:
    """Whether a file_signature is old enough to be remembered (older than RACY_SECONDS at `now_ns`)."""
    return now_ns - max(signature[3], signature[4]) > racy_ns()


def racy_ns() -> int:
    """RACY_SECONDS in nanoseconds, read when asked (tests set RACY_SECONDS): younger is not trusted."""
    return int(RACY_SECONDS * 1e9)
