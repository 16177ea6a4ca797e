"""The engine started, and handed the CRDs a few edited environments' charts pin, while krc still loads.

A command compiling a few environments (a pull request's) waits last for the engine: its Go runtime comes up
(about 60 ms of package initialisers) and then compiles the pinned chart's CRDs (a third of a CPU-second for
KubeRay's four), while this process imports what a compile needs (about 200 ms on one core) and renders. Started
only once those imports were done (Context.of), the compiles were still under way when the first objects were
validated. So the command line starts it first, from the light modules it has loaded anyway: the environment
files' signatures against the project's memo (input_digests) say which files are new or hold other bytes than
the last command hashed, and when there are a few, the engine starts on the other core; only then are the
modules that read an environment's pin and a chart loaded (through the package's lazy export), and the pinned
CRDs sent. Context.of, which decides for sure later, finds the engine running and the CRDs sent.

A guess, never wrong in what it changes: a wrong one (a template changed as well, so every environment compiles)
starts an engine such a run needs anyway, and it collects as usual from there on (charts_ahead). Nothing is
guessed without the cache, and a project that cannot be read is left to the command, which reports it.
"""
from __future__ import annotations

import contextlib
from collections.abc import Sequence

from .. import pipeline
from ..cache.location import cache_dir
from ..diagnostics.problems import KrcError
from ..native import client
from ..project.paths import Project
from ..results.input_digests import InputDigests
from .run_options import CHARTS_AHEAD_FOR, RunOptions


def start_engine_ahead(project: Project, targets: Sequence[str], run: RunOptions, roomy: bool) -> None:
    """Start the engine and send the CRDs the edited environments pin when a few environment files of `project`
    changed since the last command. `targets`: the command's arguments, environment names (none: every one); when
    one is not an environment's name (`krc lint` of files), nothing is started. `roomy`: the command's engine may
    use more memory (client.roomy_engine)."""
    if not run.cache:
        return
    try:
        names = project.environment_names()
        if not set(targets) <= set(names):
            return
        edited = _edited(project, names)
    except (OSError, KrcError):
        return
    if not 0 < len(edited) <= CHARTS_AHEAD_FOR:
        return
    with client.roomy_engine() if roomy else contextlib.nullcontext():
        client.start_engine(few=True)
    pipeline.send_pinned_crds(project, edited)


def _edited(project: Project, names: Sequence[str]) -> list[str]:
    """Of `names`, those whose file is new or holds other bytes than the memo says (as CompileCache finds them),
    up to one more than a few."""
    files = {str(project.environment_file(name)): name for name in names}
    digests = InputDigests(str(project.resolved_root), True, cache_dir())
    return [files[path] for path in digests.edited_among(files, most=CHARTS_AHEAD_FOR + 1)]
