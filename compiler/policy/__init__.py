"""Organisation policies written in CUE and evaluated by the real CUE engine (see policies/README.md)."""
from .engine import CueEngine, find_engine
from .evaluate import PolicyInput, evaluate_policies
from .project_inputs import check_project, policy_findings, policy_input

__all__ = ["CueEngine", "PolicyInput", "check_project", "evaluate_policies", "find_engine", "policy_findings",
           "policy_input"]
