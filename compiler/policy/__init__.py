"""Organisation policies written in CUE and evaluated by the real CUE engine (see policies/README.md)."""
from ..project.paths import policy_files
from .engine import CueEngine, find_engine
from .evaluate import PolicyInput, PolicyRun, evaluate_each, evaluate_policies
from .inputs import policy_findings, policy_input

__all__ = ["CueEngine", "PolicyInput", "PolicyRun", "evaluate_each", "evaluate_policies", "find_engine", "policy_files",
           "policy_findings", "policy_input"]
