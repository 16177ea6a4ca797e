"""How problems read in a terminal: the compiler-style block users know from rustc and Elm.

    environments/dev.yaml:29:9: error: memory: "32GB" is not a Kubernetes quantity
       |
    29 |         memory: 32GB
       |         ^^^^^^^^^^^^
       = help: Kubernetes writes gigabytes as G (10^9 bytes) or Gi (2^30 bytes): memory: 32Gi or memory: 32G

Colour is a `Style`, decided once at the edge (TTY, NO_COLOR, FORCE_COLOR, --color); the text is the same
without it, so logs and CI read the same as a terminal. Nothing here prints: it returns text.
"""
from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from .problems import Problem, safe_text

# A source line shown under a problem is cut here: enough for any environment line, bounded for hostile input.
MAX_SHOWN = 160
MAX_SOURCE_BYTES = 4 * 1024 * 1024
# a map key at the start of the text: plain (`maxReplicas`, `app.kubernetes.io/name`) or quoted
_KEY = re.compile(r"""([^\s:#'"][^:#]*?|'[^']*'|"[^"]*"):(\s+|$)""")

_CODES = {"error": "1;31", "warning": "1;33", "info": "1;36", "help": "1;32", "bold": "1", "dim": "2",
          "caret": "1;31", "added": "32", "removed": "31"}
COLOR_CHOICES = ("auto", "always", "never")


@dataclass(frozen=True)
class Style:
    """Whether to colour; `paint` is a no-op without colour so callers never branch."""

    color: bool = False

    def paint(self, text: str, role: str) -> str:
        if not self.color or not text:
            return text
        return f"\x1b[{_CODES.get(role, '0')}m{text}\x1b[0m"


def choose_style(choice: str, is_tty: bool, environ: Mapping[str, str]) -> Style:
    """--color wins; then NO_COLOR (any value, no-color.org) and FORCE_COLOR; else colour only on a terminal."""
    if choice == "always":
        return Style(True)
    if choice == "never":
        return Style(False)
    if environ.get("NO_COLOR"):
        return Style(False)
    if environ.get("FORCE_COLOR", "") not in ("", "0", "false"):
        return Style(True)
    return Style(is_tty and environ.get("TERM", "") != "dumb")


def plural(count: int, one: str, many: str | None = None) -> str:
    """'1 error', '2 errors', '1 policy', '3 policies'."""
    if count == 1:
        return f"{count} {one}"
    if many is None:
        many = one[:-1] + "ies" if one.endswith("y") and one[-2:-1] not in "aeiou" else one + "s"
    return f"{count} {many}"


def split_help(problem: Problem) -> tuple[str, str]:
    """The statement and the fix. Messages written before `help` existed end their statement at '; '."""
    if problem.help:
        return problem.message, problem.help
    statement, sep, fix = problem.message.partition("; ")
    return (statement, fix) if sep and fix else (problem.message, "")


def caret_span(line: str, column: int, yaml_entry: bool = True) -> tuple[int, int]:
    """0-based start and width of what to underline at a 1-based column: in YAML, a whole `key: value` entry when
    the column is at a key (the value on the same line included); else the token there."""
    start = max(0, min(column - 1, len(line)))
    if not yaml_entry:
        token = re.match(r"\w+|\S", line[start:])
        return start, len(token.group(0)) if token else 1
    if line[start:].startswith("- "):
        start += 2
    rest = line[start:]
    key = _KEY.match(rest)
    if key:
        value = rest[key.end():].split(" #", 1)[0].rstrip()
        return start, key.end(1) + 1 + (len(key.group(2)) + len(value) if value else 0)
    token = re.match(r"\S+", rest)
    return start, len(token.group(0)) if token else 1


def source_reader(root: Path) -> Callable[[str], list[str] | None]:
    """Reads the lines of files inside `root` (project-relative names, as locations give them), each once."""
    cache: dict[str, list[str] | None] = {}
    top = root.resolve()

    def read(name: str) -> list[str] | None:
        if name not in cache:
            cache[name] = None
            try:
                path = (top / name).resolve()
                if path.is_relative_to(top) and path.is_file() and path.stat().st_size <= MAX_SOURCE_BYTES:
                    cache[name] = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except (OSError, ValueError):
                pass
        return cache[name]

    return read


def format_problem(problem: Problem, style: Style = Style(),
                   read_source: Callable[[str], list[str] | None] | None = None) -> str:
    """The headline `file:line:col: severity: message [rule]`, the source line with a caret, and `= help:`."""
    statement, fix = (safe_text(part) for part in split_help(problem))
    # every part that may hold a user's text is escaped here, once, for every message: no ESC sequence, newline
    # or bidirectional override from a file, a key or a value reaches the terminal as it is
    where = safe_text(str(problem.location) if problem.location else (problem.object or "krc"))
    rule = " " + style.paint(f"[{safe_text(problem.rule)}]", "dim") if problem.rule else ""
    lines = [f"{style.paint(where, 'bold')}: {style.paint(problem.severity + ':', problem.severity)} "
             f"{statement}{rule}"]
    location = problem.location
    source = read_source(location.file) if read_source and location and location.line else None
    if location and source is not None and 0 < location.line <= len(source):
        raw = source[location.line - 1].expandtabs(1)[:MAX_SHOWN]
        start, width = caret_span(raw, location.column or 1, location.file.endswith((".yaml", ".yml")))
        # the caret is measured on the escaped text, so it stays under what it points at
        text = safe_text(raw)
        start, width = len(safe_text(raw[:start])), max(1, len(safe_text(raw[start:start + width])))
        gutter = " " * len(str(location.line))
        lines += [f"{gutter} {style.paint('|', 'dim')}",
                  f"{style.paint(str(location.line), 'dim')} {style.paint('|', 'dim')} {text}",
                  f"{gutter} {style.paint('|', 'dim')} {' ' * start}{style.paint('^' * width, problem.severity)}"]
        if fix:
            lines.append(f"{gutter} {style.paint('=', 'dim')} {style.paint('help:', 'help')} {fix}")
    elif fix:
        lines.append(f"  {style.paint('help:', 'help')} {fix}")
    return "\n".join(lines)


def format_problems(problems: Iterable[Problem], style: Style = Style(),
                    read_source: Callable[[str], list[str] | None] | None = None) -> str:
    """Every problem as a block, blocks separated by a blank line; ends with a newline (or is empty)."""
    blocks = [format_problem(p, style, read_source) for p in problems]
    return "\n\n".join(blocks) + "\n" if blocks else ""


def summary(problems: Iterable[Problem]) -> str:
    """'2 errors, 1 warning' (only the severities present; 'no problems' when there are none)."""
    found = list(problems)
    counts = [(sum(p.severity == s for p in found), s) for s in ("error", "warning", "info")]
    parts = [plural(n, s) for n, s in counts if n]
    return ", ".join(parts) if parts else "no problems"


@contextlib.contextmanager
def progress(stream: TextIO, message: str) -> Iterator[None]:
    """A status line on `stream` while something slow runs, erased afterwards; nothing unless it is a terminal,
    so logs, pipes and CI output never carry it."""
    shown = stream.isatty()
    if shown:
        stream.write(f"{message}...")
        stream.flush()
    try:
        yield
    finally:
        if shown:
            stream.write("\r\x1b[K")
            stream.flush()
