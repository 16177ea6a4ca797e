"""Offline validation of custom resources against structural CRD schemas, as the Kubernetes API server does:
pruning (unknown fields are errors here), defaulting, types, formats, bounds, list uniqueness, ObjectMeta and
CEL rules. Problem rules are `schema/<check>`; paths follow the convention in `compiler/fieldpath.py`."""
from ..k8s.crds import load_crds_from_path
from ..k8s.objects import object_ref
from .schemaset import SchemaSet, ValidationResult

__all__ = ["SchemaSet", "ValidationResult", "load_crds_from_path", "object_ref"]
