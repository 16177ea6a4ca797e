"""The process environment krc reads, in one place: every variable that changes what krc does, and what it means.

Every other module asks here (`value`), so a variable is one grep away from its meaning, and a name that is not
listed is a bug caught the first time it is asked for. Bounds on hostile input (`KRC_MAX_*` and the engines'
limits) are listed in limits.py, each with its default, and read through `value` too. What krc passes on to the
programs it starts (PATH, locale) is `inherited`; what it tells its own worker processes is `exported`.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping

VARIABLES: Mapping[str, str] = {
    "KRC_CACHE_DIR": "krc's cache folder (default $XDG_CACHE_HOME/krc/<layout> or ~/.cache/krc/<layout>)",
    "XDG_CACHE_HOME": "where user caches go, when KRC_CACHE_DIR is not set",
    "KRC_CHART_REPOSITORY": "a chart repository URL used instead of every environment's own (a mirror, file://)",
    "KRC_JOBS": "how many processes compile (default: one per core)",
    "KRC_DEBUG": "1: internal errors show their traceback",
    "KRC_ENGINE": "the krc-engine binary to run (default: the one inside the package, else the checkout's)",
    "KRC_ENGINE_SOCKET": "set by krc for its worker processes: the run's engine socket",
    "KRC_ENGINE_OWNER": "set by krc for its worker processes: the process that owns the run's engine",
    "KRC_HELPER_IDLE_SECONDS": "how long a helper process (Ray's generator) waits idle for the next request",
    "KRC_RAY_ENVS": "the folder of Ray virtual environments, one per Ray version (default .venv-ray)",
    "KRC_TEST_KILL_AT_STEP": "tests only: kill krc at that write step, to prove writes are all-or-nothing",
    # Go's own, read by the Go runtime inside gojsonnet when a process starts (krc cannot change them afterwards)
    "GOGC": "the Go collector's target in krc's processes (unless it is set, krc sets 200 in its workers, 400 where "
            "the command leaves room, and its own process holds a 4 MB ballast instead; krc chooses the engine's "
            "itself)",
    "GOMEMLIMIT": "the Go runtime's soft memory limit in krc's worker processes (krc sets KRC_JSONNET_MEMORY_MB)",
}
_BOUNDS: set[str] = set()


def register_bounds(names: Iterable[str]) -> None:
    """limits.py's variables: each bound is documented there, with its default."""
    _BOUNDS.update(names)


def value(name: str) -> str:
    """The variable's value, stripped; empty when unset."""
    if name not in VARIABLES and name not in _BOUNDS:
        raise KeyError(f"{name} is not a variable krc reads (compiler/settings/variables.py lists them)")
    return os.environ.get(name, "").strip()


def is_set(name: str) -> bool:
    return bool(value(name))


def inherited(names: Iterable[str]) -> dict[str, str]:
    """What a program krc starts inherits of krc's environment: only `names` (PATH, locale...), nothing that
    changes what its libraries do."""
    return {name: os.environ[name] for name in names if name in os.environ}


@contextlib.contextmanager
def exported(values: Mapping[str, str]) -> Iterator[None]:
    """`values` in the environment of the processes krc starts meanwhile (its workers), removed afterwards."""
    if any(name not in VARIABLES for name in values):
        raise KeyError(f"{sorted(values)}: only variables compiler/settings/variables.py lists are exported")
    os.environ.update(values)
    try:
        yield
    finally:
        for name in values:
            os.environ.pop(name, None)
