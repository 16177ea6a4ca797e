"""Jinja2 templates that render YAML (`*.j2`), with undefined variables as errors, in Jinja2's sandbox.

Templates are repository code, but krc also runs inside Argo CD's repo-server on whatever was pushed: they get
data, not the machine. The immutable sandbox refuses attribute access to Python internals
(`cycler.__init__.__globals__`) and mutation of the context; `range` is bounded (KRC_JINJA_MAX_RANGE), and so are
the strings and lists operators and calls build (KRC_JINJA_MAX_SIZE); templates
and includes are read only from templates/, never through a link that leaves it.
"""
from __future__ import annotations

import contextlib
import functools
import json
import math
import signal
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jinja2
import jinja2.sandbox
from jinja2.exceptions import SecurityError

from ..diagnostics.problems import KrcError, Location
from ..documents import yamlio
from ..project.paths import decode_text, read_resolved
from ..settings import limits


def _to_yaml(value: Any) -> str:
    """Inline a value as a YAML flow document (JSON is valid YAML): safe quoting without template tricks."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class _ConfinedLoader(jinja2.BaseLoader):
    """Templates and includes from templates/ only: no '..', no link that leaves it, no FIFO, bounded size."""

    def __init__(self, templates_dir: str):
        self.root = Path(templates_dir)
        self.resolved_root = self.root.resolve()  # once per loader, not per template and include

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Any]:
        parts = template.split("/")
        if template.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise jinja2.TemplateNotFound(f"{template} (templates are named relative to templates/, without '..')")
        path = self.root.joinpath(*parts)
        if not path.exists() and not path.is_symlink():
            raise jinja2.TemplateNotFound(template)
        shown = f"templates/{template}"
        text = decode_text(read_resolved(path.resolve(), self.resolved_root, limits.TEMPLATE_FILE_BYTES, shown),
                           shown)
        return text, str(path), lambda: False


def _bounded_range(*args: int) -> range:
    result = range(*args)
    if len(result) > limits.JINJA_RANGE.value:
        raise SecurityError(limits.JINJA_RANGE.exceeded(f"range of {len(result)} items"))
    return result


class _TemplateTimeout(Exception):
    pass


def _expire(signum: int, frame: object) -> None:
    raise _TemplateTimeout()


@contextlib.contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    """Bound a template's time: `range` is bounded, but loops inside loops multiply. A timer signal interrupts
    the (pure Python) render; it can only be armed in the main thread, where the CLI runs."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return
    previous = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _TooLarge(Exception):
    """A string or list past KRC_JINJA_MAX_SIZE, refused before it is built (or found after a call built it)."""


_SIZED = (str, bytes, list, tuple)


def _refuse_size(length: int, what: str) -> None:
    if length > limits.JINJA_SIZE.value:
        raise _TooLarge(limits.JINJA_SIZE.exceeded(f"{what} of {length} items"))


class _BoundedSandbox(jinja2.sandbox.ImmutableSandboxedEnvironment):
    """The immutable sandbox, with the sizes of what operators and calls build bounded: `'x' * 10**12`, `s + s`
    doubled in a recursive macro, `2 ** 10**9`, `'x'.ljust(10**12)` end as an error naming the template."""

    intercepted_binops = frozenset({"*", "+", "**"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for sequence, count in ((left, right), (right, left)):
                if isinstance(sequence, _SIZED) and isinstance(count, int):
                    _refuse_size(len(sequence) * count, "a repetition")
        elif operator == "+" and isinstance(left, _SIZED) and isinstance(right, _SIZED):
            _refuse_size(len(left) + len(right), "a concatenation")
        elif (operator == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1
              and right > 0):
            _refuse_size(int(right * math.log10(abs(left))), "a power's digits")
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 - as Jinja2's
        widths = isinstance(getattr(__obj, "__self__", None), _SIZED)  # 'x'.ljust(n), 'x'.center(n), 'x'.zfill(n)
        for arg in (*args, *kwargs.values()):
            if isinstance(arg, _SIZED):  # a macro's argument: `s ~ s` doubled through recursion
                _refuse_size(len(arg), "an argument")
            elif widths and isinstance(arg, int):
                _refuse_size(arg, "a width")
        result = super().call(__context, __obj, *args, **kwargs)
        if isinstance(result, _SIZED):
            _refuse_size(len(result), "a call's result")
        return result


@functools.lru_cache(maxsize=8)
def _environment(templates_dir: str) -> jinja2.Environment:
    env = _BoundedSandbox(
        loader=_ConfinedLoader(templates_dir), undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
        autoescape=False, auto_reload=False)
    env.filters["to_yaml"] = _to_yaml
    env.globals["range"] = _bounded_range
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
        with _deadline(limits.JINJA_SECONDS.value):
            text = _environment(str(templates_dir)).get_template(relative).render(**context)
    except _TemplateTimeout:
        raise KrcError(limits.JINJA_SECONDS.exceeded("rendering this template"), Location(shown)) from None
    except _TooLarge as err:
        raise KrcError(f"{err}; fix the template", Location(shown, _template_line(err))) from None
    except MemoryError as err:  # what the bounds above do not foresee (a filter's width, a format spec)
        raise KrcError(limits.JINJA_SIZE.exceeded("a value the template built (out of memory)"),
                       Location(shown, _template_line(err))) from None
    except SecurityError as err:
        raise KrcError(f"template refused by the sandbox: {err}; templates get data, not Python internals",
                       Location(shown, _template_line(err))) from None
    except jinja2.TemplateNotFound as err:
        raise KrcError(f"template not found: {err.message}; keep templates and includes under templates/",
                       Location(shown, _template_line(err))) from None
    except jinja2.TemplateSyntaxError as err:
        raise KrcError(f"template syntax: {err.message}; fix the template", Location(shown, err.lineno or 0)) from None
    except jinja2.UndefinedError as err:
        raise KrcError(f"{err.message}; define it in the environment or guard it with 'is defined'",
                       Location(shown, _template_line(err))) from None
    except jinja2.TemplateError as err:
        raise KrcError(f"template error: {err}; fix the template", Location(shown, _template_line(err))) from None
    except (ArithmeticError, TypeError, ValueError, LookupError, RecursionError) as err:
        # a template's own mistake (1/0, 'a' + 1, a recursive macro): the template's fault, at its line
        raise KrcError(f"template error: {type(err).__name__}: {err}; fix the template",
                       Location(shown, _template_line(err))) from None
    try:
        return yamlio.load_all(text, shown)
    except KrcError as err:
        raise KrcError(f"the template rendered invalid YAML ({err.problems[0].message})", Location(shown)) from None


class JinjaEngine:
    def render(self, templates: list[Path], templates_dir: Path, context: dict[str, Any],
               project_root: Path) -> list[list[Any]]:
        return [_render_one(t, templates_dir, context, t.relative_to(project_root).as_posix()) for t in templates]
