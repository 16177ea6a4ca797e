"""Environment files: layering (extends), provenance, schema validation, the resolved model.

The schema's error reports (schema_report, which imports jsonschema) are loaded when first used (PEP 562), as in
compiler.pipeline: a command whose environment files are all valid never loads them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import lazy_exports

if TYPE_CHECKING:  # the names as the type checker and the import-layer contract see them
    from .schema_report import format_conforms, layer_problems, merged_problems

# name -> the module (relative to this package) that defines it
_EXPORTS = {"format_conforms": ".schema_report", "layer_problems": ".schema_report",
            "merged_problems": ".schema_report"}
__all__ = ["format_conforms", "layer_problems", "merged_problems"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
