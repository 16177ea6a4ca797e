"""The few environments a `krc render` compiles, compiled while the other folders are checked.

A pull request's render compiles one or a few environments among hundreds and proves every other rendered/<env>/
folder untouched (results/output_stamps.py: one status per folder and file, 12,000 at 500 environments). Those
statuses are system calls, made without Python's lock: they are taken on a thread of their own
(OutputStamps.checked_in_background) while this thread compiles the few (their templates evaluating on go-jsonnet's
thread, the engine validating their objects), instead of before them. What is compiled here is kept in the compile
cache, where the render's jobs then find it (and report it compiled in this run); an environment that fails keeps
its error for its job to report, so nothing is evaluated twice (a runaway template would cost its time limit
twice).
"""
from __future__ import annotations

from collections.abc import Sequence

from ..diagnostics.problems import KrcError
from .context import Context, compile_cached, missing_entries, rendered_together
from .run_options import CHARTS_AHEAD_FOR, RunOptions
from .work import Work


def compile_few_ahead(context: Context, names: Sequence[str], run: RunOptions) -> None:
    """Compile the environments among `names` the cache lacks, when there are a few that `run` compiles in this
    process alone (more are shared with worker processes, in the render's jobs)."""
    if not context.cache.enabled:  # nothing compiled here would be found by the jobs
        return
    missing = missing_entries(context, names)
    if not missing or len(missing) > CHARTS_AHEAD_FOR or run.workers_for(Work.RENDER, len(missing)) > 1:
        return
    for name, ahead in rendered_together(context, missing).items():
        try:
            if isinstance(ahead, KrcError):
                raise ahead
            compiled, _ = compile_cached(context.project, context.cache, name, peers=context.peers, ahead=ahead)
            if not compiled.from_cache:
                context.compiled_ahead.add(name)
        except KrcError as err:
            context.failed_ahead[name] = err
