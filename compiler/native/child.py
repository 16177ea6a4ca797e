"""A Go program krc starts and talks to: the engine, a KubeRay build. Its protocol goes over two pipes of its own
(--requests-fd, --answers-fd: libraries inside print to stdout and stderr), and what it prints goes to a temporary
file, kept for the message when it ends."""
from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Callable

from ..diagnostics.problems import KrcError
from .channel import Channel

_LOG_TAIL = 4000


class ChildProcess(Channel):
    def __init__(self, binary: str, arguments: list[str], env: dict[str, str],
                 unable: Callable[[OSError], KrcError]) -> None:
        """`unable`: the error to raise when the program cannot start."""
        requests_read, requests_write = os.pipe()
        answers_read, answers_write = os.pipe()
        self._log = tempfile.TemporaryFile()
        try:
            self._process = subprocess.Popen(
                [binary, "--requests-fd", str(requests_read), "--answers-fd", str(answers_write), *arguments],
                pass_fds=(requests_read, answers_write), stdin=subprocess.DEVNULL, stdout=self._log,
                stderr=self._log, env=env, cwd="/")
        except OSError as err:
            for fd in (requests_read, requests_write, answers_read, answers_write):
                os.close(fd)
            raise unable(err) from None
        os.close(requests_read)
        os.close(answers_write)
        self.pid = os.getpid()  # a forked child never talks to its parent's program
        super().__init__(os.fdopen(requests_write, "wb"), os.fdopen(answers_read, "rb"))

    def exit_code(self) -> int | None:
        """Its exit status once it has ended (waiting a little for it), else None."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=5)
        return self._process.poll()

    def log_tail(self) -> str:
        """The last line it printed."""
        self._log.seek(0, os.SEEK_END)
        self._log.seek(max(0, self._log.tell() - _LOG_TAIL))
        lines = self._log.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else "no message"

    def alive(self) -> bool:
        return super().alive() and self._process.poll() is None

    def kill(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        super().kill()

    def close(self) -> None:
        """End it once it has answered what is under way (closing its request pipe ends it)."""
        if not self.finish_writing(timeout=10):
            self.kill()
            return
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
