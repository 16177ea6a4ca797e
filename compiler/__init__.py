"""krc: the KubeRay config compiler."""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

__version__ = "0.1.0"  # the one place it is written: pyproject.toml reads it from here


def lazy_exports(package: str, exports: dict[str, str], names: list[str]) \
        -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's `__getattr__` and `__dir__` (PEP 562) for names imported from their module when first used:
    `exports` maps each name to the module, relative to the package, that defines it. A command then loads only
    the modules of the names it uses (compiler.pipeline, compiler.review)."""

    def get(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        vars(sys.modules[package])[name] = value  # found once: later lookups do not come back here
        return value

    def listed() -> list[str]:
        return names

    return get, listed
