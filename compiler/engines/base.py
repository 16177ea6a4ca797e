"""What every template engine provides."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol


class Engine(Protocol):
    """Renders template files with one context into YAML/JSON documents.

    Engines take a batch because starting an engine can cost more than rendering (a Jsonnet VM loads its
    standard library each time). `templates_dir` bounds what a template may include or import, and error
    locations name template files relative to `project_root`. Errors raise KrcError naming template file:line.
    Returns, for each template in order, the documents it rendered.
    """

    def render(self, templates: list[Path], templates_dir: Path, context: dict[str, Any],
               project_root: Path) -> list[list[Any]]: ...
