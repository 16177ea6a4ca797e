"""A test process of pytest-xdist leaves without tearing its interpreter down once its session has ended.

By then it has sent every result to the main pytest process, and the exit handlers registered after this one have
run: krc's, which ends its helper processes, and the removal of temporary folders. What is left, freeing the
hundreds of MB of objects its tests built, held up the end of each run by a second or more with nothing to write.
tests/conftest.py imports this module before krc, so this handler runs after krc's (exit handlers run in reverse
order of registration); the two registered before it in a test process, logging's flush and execnet's cleanup of
gateways the process never opened, are skipped. The main pytest process, whose exit status is the run's, and a
pytest without xdist exit as usual.
"""
from __future__ import annotations

import atexit
import os
import sys

SESSION_ENDED: list[bool] = []  # tests/conftest.py's pytest_sessionfinish notes that the session ended


def _leave() -> None:
    if SESSION_ENDED:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


if os.environ.get("PYTEST_XDIST_WORKER"):
    atexit.register(_leave)
