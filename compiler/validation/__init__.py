"""Validation of custom resources by the API server's own code (the engine's `validate` op: pruning, defaulting,
schema, metadata, CEL), updates against golden/ (server_updates), and built-in kinds against kubernetes-validate's
JSON schemas (kubernetes_schemas). Problem rules are `schema/<check>`; paths follow
`compiler/diagnostics/fieldpath.py`."""
from ..k8s.crds import load_crds_from_path
from ..k8s.objects import object_ref
from .schemaset import SchemaSet, ValidationResult

__all__ = ["SchemaSet", "ValidationResult", "load_crds_from_path", "object_ref"]
