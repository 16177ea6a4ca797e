"""A chart's CRDs sent to the engine ahead, to compile while the environments still render.

Compiling a CRD version for the API server's validation (engine/validate_compile.go) takes tens of milliseconds per
KubeRay CRD; asked for only when the first objects are validated, that time is spent while this process waits. The
first environment (or batch of them, right after its Helm renders) a process renders sends its chart's CRDs with
their storage versions to compile (`validate` with no objects), so the engine compiles them on its own threads
meanwhile; `take` then gives the validation the engine's name for a CRD, which it names by digest instead of
sending it again. Nothing waits for these requests: the engine names a CRD by the sha256 of the bytes sent
(engine/README.md), so the name is known as soon as it is sent; a validation that reaches the engine first, or
after a compile that failed (the engine keeps no failed CRD), is answered `needCRD` and sends the CRD itself (the
engine compiles each version once whoever asks first).
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


def take(digest: str) -> str | None:
    """The engine's name for a CRD this process sent ahead (None: not sent, or its compile failed). Its answer
    need not be in: the name is the digest of what was sent."""
    pending = _AHEAD.get((os.getpid(), digest))
    if pending is None:
        return None
    if not pending.done():
        return engine_name(digest)
    del _AHEAD[os.getpid(), digest]
    try:
        answer = pending.answer()
    except (KrcError, EngineEnded):
        return None  # the validation's own request meets what ended this one
    if answer.error is None and isinstance(answer.result, dict) and isinstance(answer.result.get("crdDigest"), str):
        client.remember("crd", digest, answer.result["crdDigest"])
        return str(answer.result["crdDigest"])
    return None


def engine_name(digest: str) -> str:
    """How the engine names the CRD whose canonical text has this sha256 (krc's Crd.digest), once it was sent."""
    return f"sha256:{digest}"
