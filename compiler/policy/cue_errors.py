"""Reading CUE's error report: blocks of `path: message:` followed by indented `file:line:col` positions.

    results.e0.p1.env.ray.image: invalid value "docker.io/ray" (out of bound =~"^rayproject/"):
        ./policy/p1/images.cue:3:18
        ./input/e0.cue:4:20

The format is the same for the cue executable and its WebAssembly build.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_POSITION = re.compile(r"^\s+(?P<file>.+?):(?P<line>\d+):(?P<column>\d+)\s*$")


@dataclass(frozen=True)
class CuePosition:
    file: str  # as CUE printed it, e.g. ./policy/p0/gpu.cue
    line: int
    column: int


@dataclass(frozen=True)
class CueError:
    path: tuple[Any, ...]  # the value's path; () when the error is not about a value (syntax, imports)
    message: str
    positions: tuple[CuePosition, ...]


def parse_errors(report: str) -> list[CueError]:
    errors: list[CueError] = []
    header: str | None = None
    positions: list[CuePosition] = []

    def close() -> None:
        if header is not None:
            path, message = split_header(header)
            errors.append(CueError(path, message, tuple(positions)))

    for raw in report.splitlines():
        if not raw.strip():
            continue
        found = _POSITION.match(raw)
        if found and header is not None:
            positions.append(CuePosition(found["file"], int(found["line"]), int(found["column"])))
            continue
        if raw[:1].isspace() and header is not None:
            header += " " + raw.strip()  # a message continued on the next line
            continue
        close()
        header, positions = raw.rstrip(), []
    close()
    return errors


def split_header(header: str) -> tuple[tuple[Any, ...], str]:
    """'a.b."c.d".0: message:' -> (('a', 'b', 'c.d', 0), 'message')."""
    text = header[:-1] if header.endswith(":") else header
    labels: list[Any] = []
    i, start = 0, 0
    while i < len(text):
        char = text[i]
        if char == '"':
            end = _closing_quote(text, i)
            if end < 0:
                break
            i = end + 1
            continue
        if char == ".":
            labels.append(text[start:i])
            start = i + 1
        elif char == ":" and text[i + 1:i + 2] == " ":
            labels.append(text[start:i])
            if not all(_is_label(raw) for raw in labels):
                break
            return tuple(_label(raw) for raw in labels), text[i + 2:].strip()
        elif char.isspace():
            break
        i += 1
    return (), text.strip()


def _closing_quote(text: str, start: int) -> int:
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i
        i += 1
    return -1


def _is_label(label: str) -> bool:
    return bool(label) and (label.startswith('"') or re.fullmatch(r"[#_]*[A-Za-z0-9_$-]+", label) is not None)


def _label(label: str) -> Any:
    if label.startswith('"'):
        try:
            return json.loads(label)
        except ValueError:
            return label
    return int(label) if label.isdigit() else label
