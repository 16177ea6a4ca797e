"""Where the engine binary is: $KRC_ENGINE, else inside the installed package (pip install builds it there),
else the checkout's engine/bin (make engine)."""
from __future__ import annotations

import os
from pathlib import Path

from ..problems import KrcError

VARIABLE = "KRC_ENGINE"
NAME = "krc-engine"
PACKAGED = Path(__file__).resolve().parent / "bin" / NAME
CHECKOUT = Path(__file__).resolve().parents[2] / "engine" / "bin" / NAME

BUILD_HINT = ("build it with 'make engine' in the krc checkout (Go 1.26; the first build takes about 2 minutes) "
              "or reinstall krc with 'pip install .', which builds it")


def engine_binary() -> Path:
    """The engine to run; KrcError with what to do when there is none."""
    given = os.environ.get(VARIABLE, "").strip()
    if given:
        path = Path(given)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise KrcError(f"{VARIABLE}={given!r} is not an executable file; unset it or point it at krc-engine")
        return path
    for path in (PACKAGED, CHECKOUT):
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise KrcError(f"the krc engine ({NAME}) is not built; {BUILD_HINT}")
