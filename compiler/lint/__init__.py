"""`krc lint`: schema validation plus KubeRay rules over manifests (paths) or compiled environments.

Public entry points: `lint_objects(context)` (schema + rules), `run_rules(context)` (rules only),
`view_findings(context)` (what Ray's autoscaler view adds), `environment_context(render)` and `paths_context(...)`
(what is linted), `report.render` (output formats).

`paths_context` is imported from its module when first used (PEP 562), as compiler.pipeline's names are: every
compile lints what an environment renders, and loading how files named on the command line are found and read
(chart downloads among it) was a few milliseconds of each command's start.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import lazy_exports
from ..rules.support.context import LintContext, LintObject, RuleSetting
from .environment_context import environment_context
from .runner import lint_objects, lint_validated, run_rules, validate_objects, view_findings

if TYPE_CHECKING:  # the name as the type checker and the import-layer contract see it
    from .manifest_files import paths_context

__all__ = ["LintContext", "LintObject", "RuleSetting", "environment_context", "lint_objects", "lint_validated",
           "paths_context", "run_rules", "validate_objects", "view_findings"]

# name -> the module (relative to this package) that defines it
_EXPORTS = {"paths_context": ".manifest_files"}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
