"""Template engines behind one small interface, chosen by file suffix."""
from __future__ import annotations

from pathlib import Path

from ..problems import KrcError
from .base import Engine
from .jinja import JinjaEngine
from .jsonnet import JsonnetEngine

ENGINES: dict[str, Engine] = {
    ".j2": JinjaEngine(),
    ".jsonnet": JsonnetEngine(),
}


def engine_for(template: Path) -> Engine:
    engine = ENGINES.get(template.suffix)
    if engine is None:
        raise KrcError(f"no engine renders '{template.name}'; template files end in {', '.join(sorted(ENGINES))}")
    return engine
