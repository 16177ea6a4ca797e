"""krc as an Argo CD config-management plugin: request parameters, document selection, Argo CD CRD checks.

Public entry points: `read_request(environ, options)`, `generate(project, request, argocd_crds)`,
`init(project, request)`, and `validation.environment_problems(...)` for the Argo CD schema check.
"""
from .generate import Generated, describe, generate, init
from .parameters import Request, read_request

__all__ = ["Generated", "Request", "describe", "generate", "init", "read_request"]
