"""Plain data written straight as YAML text: the fast path of `yamlio.dump`, ahead of the emitter's events.

The text is what PyYAML's canonical dumper writes (block style, sorted keys, lists in maps not indented, `{}` and
`[]` for empty ones, literal blocks for multi-line text). Its layout is assembled here line by line, and each
scalar is written as libyaml's emitter writes it in that place (yaml_scalars: found once, remembered). Handing
the emitter every event of every document one call at a time was most of the cost of writing a file; here a
document whose scalars were all seen before is string operations only, and one that brings new ones asks the
emitter about them all at once.

For anything else it answers None and `yamlio.dump` takes the event path (yaml_emit), which decides: a root that
is not a map or list, a key the emitter writes as a complex key (multi-line, or over 128 bytes), a list or map that
appears twice (PyYAML writes an alias), keys that do not sort, other types, nesting or text near the width.
"""
from __future__ import annotations

from typing import Any

from .yaml_emit import Unsupported
from .yaml_scalars import ITEMS, KEYS, VALUES, Place, learn, make_room, may_span_lines, prepare

# what the writer reads for every scalar (items share the values' one-line texts)
_KEY_TEXTS, _ITEM_TEXTS = KEYS.texts, ITEMS.texts
_VALUE_TEXTS, _VALUE_INTS, _VALUE_FIXED = VALUES.texts, VALUES.ints, VALUES.fixed
_EMPTY_VALUE = {dict: " {}\n", list: " []\n"}  # the emitter writes an empty map or list in flow style
_PADDED = 200  # indentation made ahead for the columns of 100 levels of nesting
_PADS = [" " * n for n in range(_PADDED)]
_MISSING = "\x00"  # a scalar's text until the emitter is asked: the emitter never writes a NUL (it escapes it)
_MIN_WIDTH = 4096  # below it lines may reach the width, where the emitter breaks them: left to the event path


class _Writer:
    """One document's lines. A scalar not yet asked of the emitter is written as `_MISSING` and noted (`missing`):
    the caller asks for them all at once, then `fill` puts their text in."""

    def __init__(self, limit: int) -> None:
        self.lines: list[str] = []
        self.containers: list[int] = []  # ids of the maps and lists: one seen twice is written as an alias
        self.missing: list[tuple[int, Place, Any, int | None]] = []  # (line, place, scalar, column if over lines)
        self.over_lines: list[tuple[Place, str, int]] = []  # text over several lines, in order: see `ending`
        self.limit = limit  # the deepest column written: past it a line could reach the emitter's width

    def scalar(self, place: Place, data: Any, column: int) -> str:
        """The text of a scalar in `place` (the one-line ones the caller did not find itself)."""
        text = place.known(data)
        if text:
            return text
        over_lines = text == "" or (text is None and may_span_lines(place, data))
        if over_lines:  # its text depends on the column
            self.over_lines.append((place, data, column))
            found = place.by_column.get((data, column))
            if found is not None:
                return found[0]
        self.missing.append((len(self.lines), place, data, column if over_lines else None))
        return _MISSING

    def fill(self) -> None:
        """Put the text of the scalars that were missing in their lines (each line has its key's before its
        value's)."""
        lines = self.lines
        for line, place, data, column in self.missing:
            text = place.known(data) if column is None else place.by_column.get((data, column), ("",))[0]
            if not text:
                raise Unsupported  # forgotten meanwhile: another thread's document filled the places
            lines[line] = lines[line].replace(_MISSING, text, 1)

    def ending(self) -> str:
        """What ends the stream: "..." when the last block scalar kept its trailing line breaks ("|+"), which
        leaves the document open (libyaml's open_ended; a quoted scalar leaves it as it was)."""
        for place, data, column in reversed(self.over_lines):
            found = place.by_column.get((data, column))
            if found is None:
                raise Unsupported
            if found[1] is not None:
                return "...\n" if found[1] else ""
        return ""

    def deeper(self, column: int) -> str:
        """The indentation of a column past those made ahead; past the limit a line could reach the width."""
        if column > self.limit:
            raise Unsupported
        return " " * column

    def mapping(self, data: dict[Any, Any], column: int, lead: str | None) -> None:
        """A map whose keys start at `column`; `lead` starts its first line when it is not the indentation (the
        dashes of the list items it opens)."""
        try:
            entries = sorted(data.items())
        except TypeError:  # keys of types that do not compare: PyYAML writes them in their order; left to it
            raise Unsupported from None
        lines, containers = self.lines, self.containers
        indent = _PADS[column] if column < _PADDED else self.deeper(column)
        if lead is None:
            lead = indent
        for key, value in entries:
            if type(key) is str:
                name = _KEY_TEXTS.get(key) or self.scalar(KEYS, key, column)
            else:
                name = self.scalar(KEYS, key, column)
            kind = type(value)
            if kind is str:
                lines.append(f"{lead}{name}{_VALUE_TEXTS.get(value) or self.scalar(VALUES, value, column)}")
            elif kind is dict or kind is list:
                containers.append(id(value))
                if not value:
                    lines.append(f"{lead}{name}{_EMPTY_VALUE[kind]}")
                elif kind is dict:
                    lines.append(f"{lead}{name}\n")
                    self.mapping(value, column + 2, None)
                else:
                    lines.append(f"{lead}{name}\n")
                    self.sequence(value, column, indent)
            elif kind is int:
                lines.append(f"{lead}{name}{_VALUE_INTS.get(value) or self.scalar(VALUES, value, column)}")
            elif kind is bool or value is None:
                lines.append(f"{lead}{name}{_VALUE_FIXED.get(value) or self.scalar(VALUES, value, column)}")
            else:
                lines.append(f"{lead}{name}{self.scalar(VALUES, value, column)}")
            lead = indent

    def sequence(self, data: list[Any], column: int, lead: str) -> None:
        """A list whose dashes are at `column`; `lead` starts its first line, as for `mapping`."""
        lines, containers = self.lines, self.containers
        indent = _PADS[column] if column < _PADDED else self.deeper(column)
        for item in data:
            kind = type(item)
            if kind is str:
                lines.append(f"{lead}-{_ITEM_TEXTS.get(item) or self.scalar(ITEMS, item, column)}")
            elif kind is dict or kind is list:
                containers.append(id(item))
                if not item:
                    lines.append(f"{lead}-{_EMPTY_VALUE[kind]}")
                elif kind is dict:
                    self.mapping(item, column + 2, f"{lead}- ")
                else:
                    self.sequence(item, column + 2, f"{lead}- ")
            else:
                lines.append(f"{lead}-{self.scalar(ITEMS, item, column)}")
            lead = indent


def _write(data: Any, width: int) -> _Writer:
    writer = _Writer(width // 4)
    writer.containers.append(id(data))
    if type(data) is dict:
        if data:
            writer.mapping(data, 0, None)
        else:
            writer.lines.append("{}\n")
    elif data:
        writer.sequence(data, 0, "")
    else:
        writer.lines.append("[]\n")
    return writer


def plain_text(data: Any, width: int) -> str | None:
    """The canonical text of one document of plain data whose root is a map or list, or None (the caller's
    event path then writes it)."""
    if (type(data) is not dict and type(data) is not list) or width < _MIN_WIDTH:
        return None
    prepare(width)
    try:
        writer = _write(data, width)
        if len(set(writer.containers)) != len(writer.containers):
            return None  # a map or list that appears twice: PyYAML writes an anchor and an alias
        if writer.missing:
            if make_room(len(writer.missing)):
                writer = _write(data, width)  # what it had found was forgotten too
            learn([(place, scalar, column) for _, place, scalar, column in writer.missing], width)
            writer.fill()
        return "".join(writer.lines) + writer.ending()
    except (Unsupported, RecursionError):
        return None
