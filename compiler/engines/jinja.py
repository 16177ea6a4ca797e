"""Jinja2 templates that render YAML (`*.j2`), with undefined variables as errors."""
from __future__ import annotations

import functools
import json
import traceback
from pathlib import Path
from typing import Any

import jinja2

from .. import yamlio
from ..problems import KrcError, Location


def _to_yaml(value: Any) -> str:
    """Inline a value as a YAML flow document (JSON is valid YAML): safe quoting without template tricks."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@functools.lru_cache(maxsize=8)
def _environment(templates_dir: str) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(templates_dir), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, autoescape=False)
    env.filters["to_yaml"] = _to_yaml
    return env


def _template_line(err: BaseException) -> int:
    """Line of the innermost traceback frame inside a template (Jinja2 rewrites frames to template lines)."""
    line = 0
    for frame in traceback.extract_tb(err.__traceback__):
        if frame.filename and frame.filename.endswith((".j2", ".jinja")):
            line = frame.lineno or line
    return line


def _render_one(template: Path, templates_dir: Path, context: dict[str, Any], shown: str) -> list[Any]:
    relative = template.relative_to(templates_dir).as_posix()
    try:
        text = _environment(str(templates_dir)).get_template(relative).render(**context)
    except jinja2.TemplateSyntaxError as err:
        raise KrcError(f"template syntax: {err.message}; fix the template", Location(shown, err.lineno or 0)) from None
    except jinja2.UndefinedError as err:
        raise KrcError(f"{err.message}; define it in the environment or guard it with 'is defined'",
                       Location(shown, _template_line(err))) from None
    except jinja2.TemplateError as err:
        raise KrcError(f"template error: {err}; fix the template", Location(shown, _template_line(err))) from None
    try:
        return yamlio.load_all(text, shown)
    except KrcError as err:
        raise KrcError(f"the template rendered invalid YAML ({err.problems[0].message})", Location(shown)) from None


class JinjaEngine:
    def render(self, templates: list[Path], templates_dir: Path, context: dict[str, Any],
               project_root: Path) -> list[list[Any]]:
        return [_render_one(t, templates_dir, context, t.relative_to(project_root).as_posix()) for t in templates]
