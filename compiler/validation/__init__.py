"""Validation of custom resources by the API server's own code (the engine's `validate` op: pruning, defaulting,
schema, metadata, CEL), updates against golden/ (server_updates), and built-in kinds against kubernetes-validate's
JSON schemas (kubernetes_schemas). Problem rules are `schema/<check>`; paths follow
`compiler/diagnostics/fieldpath.py`.

A built-in kind's errors (kubernetes_schema_errors, which imports jsonschema) are loaded when first used (PEP 562),
as in compiler.pipeline: a command whose objects are all valid never loads them."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import lazy_exports
from ..k8s.crds import load_crds_from_path
from ..k8s.objects import object_ref
from .schemaset import SchemaSet, ValidationResult

if TYPE_CHECKING:  # the names as the type checker and the import-layer contract see them
    from .kubernetes_schema_errors import schema_errors

_EXPORTS = {"schema_errors": ".kubernetes_schema_errors"}
__all__ = ["SchemaSet", "ValidationResult", "load_crds_from_path", "object_ref", "schema_errors"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
