"""The CUE that evaluates policies: cuelang.org/go inside krc's native engine (engine/policy.go), asked over
compiler/native/client.py. There is no CUE process of its own any more, no Node, no `cue` on PATH."""
from __future__ import annotations

from dataclasses import dataclass

from ..native.binary import engine_identity


@dataclass(frozen=True)
class CueEngine:
    """The engine build that evaluates policies. `description` names it in the policy cache's keys (its file,
    size and modification time: a rebuilt engine, which may hold another CUE, is another engine), so findings
    kept from one build are never taken for another's."""

    description: str


def find_engine() -> CueEngine:
    """The engine krc runs; KrcError saying how to build it when there is none."""
    return CueEngine(engine_identity())
