"""The CUE that evaluates policies: cuelang.org/go inside krc's native engine (engine/policy.go), asked over
compiler/native/client.py. There is no CUE process of its own any more, no Node, no `cue` on PATH."""
from __future__ import annotations

from dataclasses import dataclass

from ..native.binary import engine_binary
from ..problems import KrcError


@dataclass(frozen=True)
class CueEngine:
    """The engine build that evaluates policies. `description` names it in the policy cache's keys (its file,
    size and modification time: a rebuilt engine, which may hold another CUE, is another engine), so findings
    kept from one build are never taken for another's."""

    description: str


def find_engine() -> CueEngine:
    """The engine krc runs; KrcError saying how to build it when there is none."""
    path = engine_binary()
    try:
        facts = path.stat()
    except OSError as err:
        raise KrcError(f"the krc engine {path} cannot be read ({err.strerror or err}); rebuild it with "
                       "'make engine'") from None
    return CueEngine(f"CUE in krc-engine {path} ({facts.st_size} bytes, modified {facts.st_mtime_ns})")
