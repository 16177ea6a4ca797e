"""Environment files: layering (extends), provenance, schema validation, the resolved model."""
