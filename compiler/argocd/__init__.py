"""krc as an Argo CD config-management plugin: request parameters, document selection, Argo CD CRD checks.

Public entry points: `read_request(environ, options)`, `chosen_environment(project, request)`,
`generated(environment, request)`, and `validation.environment_problems(...)` for the Argo CD schema check.
"""
from .generate import CheckedEnvironment, Generated, chosen_environment, describe, generated
from .parameters import Request, read_request

__all__ = ["CheckedEnvironment", "Generated", "Request", "chosen_environment", "describe", "generated", "read_request"]
