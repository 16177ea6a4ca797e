"""Organisation policies written in CUE and evaluated by the real CUE engine (see policies/README.md).

Names are imported from their module when first used (PEP 562), as in compiler.pipeline: a compile names
`PolicyRun` in its context and does not load how policies are evaluated or given their inputs for that.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import lazy_exports

if TYPE_CHECKING:  # the names as the type checker and the import-layer contract see them
    from ..project.paths import policy_files
    from .engine import CueEngine, find_engine
    from .evaluate import PolicyInput, PolicyRun, evaluate_each, evaluate_policies
    from .inputs import policy_findings, policy_input

# name -> the module (relative to this package) that defines it
_EXPORTS = {
    "policy_files": "..project.paths", "CueEngine": ".engine", "find_engine": ".engine", "PolicyInput": ".evaluate",
    "PolicyRun": ".evaluate", "evaluate_each": ".evaluate", "evaluate_policies": ".evaluate",
    "policy_findings": ".inputs", "policy_input": ".inputs",
}
__all__ = ["CueEngine", "PolicyInput", "PolicyRun", "evaluate_each", "evaluate_policies", "find_engine", "policy_files",
           "policy_findings", "policy_input"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
