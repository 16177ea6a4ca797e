"""The error edge every command goes through: exit codes, error blocks, and the options commands share.
"""
from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import click

from .. import pipeline
from ..cache import forget_trusted_folders
from ..diagnostics.problems import KrcError, safe_text
from ..settings import variables
from .support import (
    WorkflowGroup,
    show_problems,
)

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 120}


def run_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--no-cache and --jobs, for commands that work through many environments (see pipeline.RunOptions)."""
    command = click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
                           help="Processes compiling in parallel at most (default: $KRC_JOBS, else one per "
                           "core); fewer when too few environments need compiling to repay a worker's "
                           "start.")(command)
    return click.option("--no-cache", is_flag=True, help="Compile everything again; neither read nor write the "
                        "compile cache.")(command)


def run_settings(no_cache: bool, jobs: int | None) -> pipeline.RunOptions:
    return pipeline.RunOptions(cache=not no_cache, workers=jobs)


DEBUG_VARIABLE = "KRC_DEBUG"


def _debugging() -> bool:
    return variables.value(DEBUG_VARIABLE) not in ("", "0", "false", "no")


class ErrorEdge(WorkflowGroup):
    """The one place where failures become exit codes, for every command and subcommand.

    KrcError (bad input): its problems, exit 2. OSError (disk full, read-only, permissions, network): one line,
    exit 2. Anything else is krc's bug: one line saying so, exit 3, the traceback only with KRC_DEBUG=1. Exit 1
    keeps its one meaning, findings or differences, so CI can tell a crash from a change.
    """

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        try:  # --help and --version print while the options are parsed, before invoke
            return super().make_context(info_name, args, parent, **extra)
        except BrokenPipeError:
            pipe_closed()

    def invoke(self, ctx: click.Context) -> object:
        forget_trusted_folders()  # each command checks the cache's folders anew (tests run many in one process)
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException, SystemExit,
                KeyboardInterrupt):
            raise
        except KrcError as err:
            show_problems(err.problems)
            sys.exit(2)
        except BrokenPipeError:
            pipe_closed()
        except OSError as err:
            if _debugging():
                raise
            where = f" ({err.filename})" if err.filename else ""
            click.echo(safe_text(f"krc: error {err.strerror or err}{where}; check the disk, permissions and "
                                 "network, then run again"), err=True)
            sys.exit(2)
        except Exception as err:  # noqa: BLE001 - the edge: whatever escaped is an internal error
            if _debugging():
                raise
            click.echo(safe_text(f"krc: internal error: {type(err).__name__}: {str(err)[:300]}; please report it, "
                                 f"with the traceback from running again with {DEBUG_VARIABLE}=1"), err=True)
            sys.exit(3)


# `krc rules | head`: the reader has gone. krc stops at once and quietly, with the status a tool killed by SIGPIPE
# reports (128 + 13, as `yes | head` under `set -o pipefail`): not 0, since what was asked was not all written,
# and not 1 or 2, which mean findings and bad input. It exits rather than dying of the signal, so exit handlers
# still stop helpers and remove temporary folders.
BROKEN_PIPE_EXIT = 141


def pipe_closed() -> NoReturn:
    """Stop for a closed pipe: what is still buffered for stdout is dropped (pointed at /dev/null, so the flush at
    exit cannot fail again), nothing is printed."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    sys.exit(BROKEN_PIPE_EXIT)


def flush_output() -> None:
    """At the end of `krc`: stdout written out, a pipe closed meanwhile ending as any closed pipe does."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        pipe_closed()
