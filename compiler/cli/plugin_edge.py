"""The error edge of the plugin's commands (`krc argocd init` and `generate`), as Argo CD's cmp server runs them.

Argo CD shows a failed plugin command's whole stderr as the Application's error, after "`krc argocd generate`
failed exit status 2:" (cmpserver/plugin/plugin.go); the caret blocks krc prints on a terminal would reach the UI
as lines of ASCII art, so here every problem is one line (`file:line:col: error: message; fix`), and several are
joined into that one line.

Argo CD's deadline (the controller's repo-server timeout, 60 s by default, of which the repository's transfer
takes its share) ends the command with SIGKILL and says only "DeadlineExceeded": the command's stderr never
arrives (tests/argocd/harness shows it through the real server). So each command stops itself first, after
KRC_PLUGIN_SECONDS, with an error that says what ran out.
"""
from __future__ import annotations

import contextlib
import functools
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import click

from ..diagnostics.problems import KrcError
from ..settings import limits


def one_line(error: KrcError) -> str:
    return " | ".join(problem.one_line() for problem in error.problems)


# Not SIGALRM: the Jinja2 engine's per-template timer uses (and clears) the process's one real-time timer
_DEADLINE_SIGNAL = signal.SIGUSR1


@contextlib.contextmanager
def _plugin_deadline(command: str) -> Iterator[None]:
    """After KRC_PLUGIN_SECONDS a timer thread signals the main thread, whose handler raises KrcError wherever
    the command is: `finally` blocks and exit handlers run as after any error (the engine stops, temporary
    folders go)."""
    seconds = limits.PLUGIN_SECONDS.value
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach only the main thread: an in-process caller on another thread keeps its own bounds
        return

    def give_up(signum: int, frame: FrameType | None) -> None:
        raise KrcError(f"krc argocd {command} stopped itself: "
                       + limits.PLUGIN_SECONDS.exceeded(f"running for {seconds} s")
                       + " (and the controller's --repo-server-timeout-seconds with it, or Argo CD kills the "
                       "plugin first); `krc render` shows what is slow")

    previous = signal.signal(_DEADLINE_SIGNAL, give_up)
    # pthread_kill: a signal to the main thread itself interrupts whatever it waits on (a join, a read)
    timer = threading.Timer(seconds, signal.pthread_kill, (threading.main_thread().ident, _DEADLINE_SIGNAL))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        signal.signal(_DEADLINE_SIGNAL, previous)


def plugin_command(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Bad input, or running out of time, becomes one line on stderr and exit status 2."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                with _plugin_deadline(name):
                    return command(*args, **kwargs)
            except KrcError as err:
                click.echo(one_line(err), err=True)
                sys.exit(2)

        return wrapper

    return decorate
