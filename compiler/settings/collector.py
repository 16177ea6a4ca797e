"""The collectors of krc's processes: Python's cycle collector (the command's process and each worker's) and Go's,
inside gojsonnet, in the worker processes krc starts.

Python's collector runs a pass every 700 allocations by default. krc allocates millions of objects (parsed files,
rendered objects, engine answers) that form almost no cycles, and on a heap that imports alone make large: its
passes were 5-7 % of a one-environment render. Every 10,000 allocations, what cycles there are still go, a few
milliseconds later.

The Go runtime inside gojsonnet reads GOGC and GOMEMLIMIT once, when the process starts, so krc can set them only
for the processes it starts: its workers (`go_runtime_for_workers`). A Jsonnet run allocates fast and keeps
little, and at Go's default target (the heap may double, and grows to 4 MB at least) its collector was about a
quarter of go-jsonnet's time, scanning the evaluation's deep stacks each time. One batch of object templates
evaluated 60 times took 3.28 CPU-s at Go's default, 2.99 at 200 (4.5 MB more at peak) and 2.54 at 400 (21 MB
more), which took `krc lint` of 500 environments past its 400 MB: workers get 200, and 400 in a command that
leaves its processes that room (no Ray generator beside them: client.has_room, as the engine's roomy collector).
Alternating cold runs of 500 environments, 400 against 200: `krc render` 1-2 % less CPU (seven pairs) and `krc
policy` 2 % (four), at 8-26 MB more at peak, under 375 MB. GOMEMLIMIT at KRC_JSONNET_MEMORY_MB makes the collector
work harder near the bound krc holds every evaluation to anyway, so a template within the bound at Go's defaults
is within it here too. A value set in krc's own environment is kept.

The command's own process keeps Go's default target (its environment is the user's), but where it compiles many
environments (beside workers, or alone with more than a few) it holds a ballast of COMMAND_BALLAST_MB
(engines/jsonnet_ballast.py), which spaces its collections as a higher target would. 500 environments from empty
caches against none (bench/versus.py, three rounds): `krc render`, `lint` and `policy` 0.98 of the CPU at the same
peak. 8 MB saved more in alternating pairs (render 0.97, policy 0.95) but took a cold render's peak 27 MB higher,
to 391 MB, too near 400 for the template-edit render, which peaks higher still. None when krc's environment sets
GOGC: the runtime then runs at the user's target.
"""
from __future__ import annotations

import gc

from . import limits, variables

THRESHOLDS = (10_000, 10, 10)
WORKER_GOGC = "200"
ROOMY_WORKER_GOGC = "400"
COMMAND_BALLAST_MB = 4


def collect_less() -> None:
    gc.set_threshold(*THRESHOLDS)


def go_runtime_for_workers(roomy: bool = False) -> dict[str, str]:
    """GOGC and GOMEMLIMIT for a worker process's gojsonnet (see above), each unless krc's environment sets it;
    `roomy`: the command leaves its processes room to grow."""
    wanted = {"GOGC": ROOMY_WORKER_GOGC if roomy else WORKER_GOGC,
              "GOMEMLIMIT": f"{limits.JSONNET_MEMORY_MB.value}MiB"}
    return {name: value for name, value in wanted.items() if not variables.is_set(name)}


def command_ballast_mb() -> int:
    """The ballast the command's own gojsonnet holds where it compiles many environments (see above); 0 when krc's
    environment sets GOGC."""
    return 0 if variables.is_set("GOGC") else COMMAND_BALLAST_MB
