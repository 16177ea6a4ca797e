"""krc as an Argo CD config-management plugin: request parameters, document selection, Argo CD CRD checks.

Public entry points: `read_request(environ, options)`, `chosen_environment(project, request)`,
`generated(environment, request)`, and `validation.environment_problems(...)` for the Argo CD schema check.

Names are imported from their module when first used (PEP 562), as in compiler.pipeline: every compile checks its
Argo CD objects (`validation`) and does not load the plugin's request and output modules for that.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import lazy_exports

if TYPE_CHECKING:  # the names as the type checker and the import-layer contract see them
    from .generate import CheckedEnvironment, Generated, chosen_environment, describe, generated
    from .parameters import Request, read_request

# name -> the module (relative to this package) that defines it
_EXPORTS = {
    "CheckedEnvironment": ".generate", "Generated": ".generate", "chosen_environment": ".generate",
    "describe": ".generate", "generated": ".generate", "Request": ".parameters", "read_request": ".parameters",
}
__all__ = ["CheckedEnvironment", "Generated", "Request", "chosen_environment", "describe", "generated", "read_request"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
