"""krc: the KubeRay config compiler."""

__version__ = "0.1.0"  # the one place it is written: pyproject.toml reads it from here
