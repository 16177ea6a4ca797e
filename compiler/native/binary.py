"""Where krc's native binaries are and which builds they are: the engine ($KRC_ENGINE, else inside the installed
package, which pip install builds, else the checkout's engine/bin, which make engine builds) and KubeRay's builds
(engine/kuberay/bin). Light on purpose: every command's cache keys name these builds, and a warm command starts
none of them (native/client.py and native/kuberay.py start them)."""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

from ..diagnostics.problems import KrcError
from ..settings import variables

VARIABLE = "KRC_ENGINE"
NAME = "krc-engine"
PACKAGED = Path(__file__).resolve().parent / "bin" / NAME
CHECKOUT = Path(__file__).resolve().parents[2] / "engine" / "bin" / NAME
KUBERAY_BUILDS = Path(__file__).resolve().parents[2] / "engine" / "kuberay"
_VERSION = re.compile(r"^\d+\.\d+\.\d+$")

BUILD_HINT = ("build it with 'make engine' in the krc checkout (Go 1.26; the first build takes about 2 minutes) "
              "or reinstall krc with 'pip install .', which builds it")


def engine_binary() -> Path:
    """The engine to run; KrcError with what to do when there is none."""
    given = variables.value(VARIABLE)
    if given:
        path = Path(given)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise KrcError(f"{VARIABLE}={given!r} is not an executable file; unset it or point it at krc-engine")
        return path
    for path in (PACKAGED, CHECKOUT):
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise KrcError(f"the krc engine ({NAME}) is not built; {BUILD_HINT}")


def build_facts() -> tuple[Path, str, dict[str, str]]:
    """The engine binary, its sha256 and the module versions it was built with (`krc-engine --version`);
    KrcError when there is no engine or it does not answer."""
    path = engine_binary()
    try:
        done = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=20, check=True)
        versions = json.loads(done.stdout)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except (OSError, subprocess.SubprocessError, ValueError) as err:
        raise KrcError(f"the krc engine {path} does not say its version ({err}); {BUILD_HINT}") from None
    if not isinstance(versions, dict):
        raise KrcError(f"the krc engine {path} printed no versions; {BUILD_HINT}")
    return path, digest, {str(k): str(v) for k, v in versions.items()}


def engine_identity() -> str:
    """The engine build as cache keys name it: its file, size and modification time (a rebuilt engine, which
    may hold other libraries, is another engine), so an answer kept from one build is never taken for another's."""
    path = engine_binary()
    try:
        facts = path.stat()
    except OSError as err:
        raise KrcError(f"the krc engine {path} cannot be read ({err.strerror or err}); {BUILD_HINT}") from None
    return f"krc-engine {path} ({facts.st_size} bytes, modified {facts.st_mtime_ns})"


def binary_for(version: str) -> Path:
    """Where the build of KubeRay `version`'s code is (make kuberay), built or not."""
    return KUBERAY_BUILDS / "bin" / f"krc-kuberay-v{version}"


def built_versions() -> list[str]:
    """The KubeRay versions krc has code for (engine/kuberay/vX.Y.Z), built or not."""
    found = [p.parent.name[1:] for p in KUBERAY_BUILDS.glob("v*/go.mod")]
    return sorted(found, key=lambda v: tuple(int(x) for x in v.split(".")) if _VERSION.match(v) else (0,))


def build_identity(version: str) -> str:
    """One KubeRay build as cache keys name it (file, size, modification time), or that there is none."""
    path = binary_for(version)
    try:
        facts = path.stat()
    except OSError:
        return f"{path} (absent)"
    return f"{path} ({facts.st_size} bytes, modified {facts.st_mtime_ns})"


def builds_identity() -> str:
    """Every KubeRay build as cache keys name it: a result made with one build, or with none (kuberay/validator
    finds nothing then), is never taken for another's."""
    return "; ".join(build_identity(version) for version in built_versions())
