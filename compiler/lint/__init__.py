"""`krc lint`: schema validation plus KubeRay rules over manifests (paths) or compiled environments.

Public entry points: `lint_objects(context)` (schema + rules), `run_rules(context)` (rules only),
`view_findings(context)` (what Ray's autoscaler view adds), `environment_context(render)` and `paths_context(...)`
(what is linted), `report.render` (output formats).
"""
from __future__ import annotations

from ..rules.support.context import LintContext, LintObject, RuleSetting
from .environment_context import environment_context
from .manifest_files import paths_context
from .runner import lint_objects, lint_validated, run_rules, validate_objects, view_findings

__all__ = ["LintContext", "LintObject", "RuleSetting", "environment_context", "lint_objects", "lint_validated",
           "paths_context", "run_rules", "validate_objects", "view_findings"]
