"""Writing one file so that readers see the old content or the new, never a part: written beside its target,
then renamed over it."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

_MADE_MODE = 0o600  # what mkstemp makes a file with, whatever the umask


def write_atomically(path: Path, content: bytes, mode: int = 0o644, parent_made: bool = False) -> None:
    """`parent_made`: the caller made sure the folder is there (the cache, which checks every folder anyway)."""
    if not parent_made:
        path.parent.mkdir(parents=True, exist_ok=True)
    handle, stage = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.new-")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content)
        if mode != _MADE_MODE:
            os.chmod(stage, mode)
        os.replace(stage, path)
    except BaseException:
        Path(stage).unlink(missing_ok=True)
        raise
