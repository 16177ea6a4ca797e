"""A chart's CRDs sent to the engine ahead, to compile while the environments still render.

Compiling a CRD version for the API server's validation (engine/validate_compile.go) takes tens of milliseconds per
KubeRay CRD; asked for only when the first objects are validated, that time is spent while this process waits. The
first environment (or batch of them, right after its Helm renders) a process renders sends its chart's CRDs with
their storage versions to compile (`validate` with no objects), so the engine compiles them on its own threads
meanwhile; `take` then hands the engine's name for a CRD to the validation, which names it by digest instead of
sending it again. Nothing waits for these requests: one not answered yet, or answered with an error, is left to the
validation, which sends the CRD itself and gets its own answer (and the engine compiles each version once whoever
asks first).
"""
from __future__ import annotations

import os
from collections.abc import Iterable

from ..diagnostics.problems import KrcError
from ..native import client
from ..native.channel import EngineEnded, RawJSON
from .package import Crd

TIMEOUT_SECONDS = 120.0

# Sent and not taken yet, by (process, CRD digest): a worker process talks to the engine on its own connection
_AHEAD: dict[tuple[int, str], client.Pending] = {}


def send(crds: Iterable[Crd]) -> None:
    """Have the engine compile each CRD's storage version now, unless this process sent it before."""
    for crd in crds:
        key = (os.getpid(), crd.digest)
        if key in _AHEAD or client.engine_name("crd", crd.digest) is not None:
            continue
        try:
            _AHEAD[key] = client.Pending("validate", {"crd": RawJSON(crd.canonical), "objects": [],
                                                      "compile": [crd.storage_version],
                                                      "share": client.shares_schemas()},
                                         f"compiling CRD {crd.name}", TIMEOUT_SECONDS)
        except (KrcError, EngineEnded):
            return  # no engine: the validation reports it


def take(digest: str) -> None:
    """Remember the engine's name for a CRD sent ahead, if its answer is in (validate then names it by digest)."""
    pending = _AHEAD.get((os.getpid(), digest))
    if pending is None or not pending.done():
        return
    del _AHEAD[os.getpid(), digest]
    try:
        answer = pending.answer()
    except (KrcError, EngineEnded):
        return  # the validation's own request meets what ended this one
    if answer.error is None and isinstance(answer.result, dict) and isinstance(answer.result.get("crdDigest"), str):
        client.remember("crd", digest, answer.result["crdDigest"])
