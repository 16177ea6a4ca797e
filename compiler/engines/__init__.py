"""Template engines behind one small interface, chosen by file suffix.

An engine's module, and the template language it brings, is loaded the first time a template of its suffix is
rendered: a project of Jsonnet templates (the shipped one) never imports Jinja2, which is 30 ms of every krc start.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from ..diagnostics.problems import KrcError
from .base import Engine

# suffix -> the module (relative to this package) and class of its engine, imported when first needed
ENGINE_CLASSES: dict[str, str] = {
    ".j2": ".jinja:JinjaEngine",
    ".jsonnet": ".jsonnet:JsonnetEngine",
}
SUFFIXES = tuple(ENGINE_CLASSES)
_ENGINES: dict[str, Engine] = {}  # one instance per suffix, made when first needed


def engine_of_suffix(suffix: str) -> Engine:
    """The engine of one of SUFFIXES (engine_for checks a template's suffix)."""
    engine = _ENGINES.get(suffix)
    if engine is None:
        module, _, name = ENGINE_CLASSES[suffix].partition(":")
        engine = _ENGINES[suffix] = getattr(importlib.import_module(module, __name__), name)()
    return engine


def engine_for(template: Path) -> Engine:
    if template.suffix not in ENGINE_CLASSES:
        raise KrcError(f"no engine renders '{template.name}'; template files end in {', '.join(sorted(SUFFIXES))}")
    return engine_of_suffix(template.suffix)
