"""How libyaml's emitter writes each scalar, asked of the emitter itself and remembered: what yaml_text assembles.

A scalar is written as a map key (a simple key, up to its colon), as a map value (after the key's colon) or as a
list item (after the dash). Text on one line is the same after a colon as after a dash (libyaml writes both with
the same scalar writer, right after an indicator), so values and items share theirs; keys are asked as keys.
Text the emitter writes over several lines (a literal block, or a quoted scalar with a line break other than
"\\n") has each line after the first indented to the scalar's indentation, two columns right of where its key or
dash starts: it is asked for and kept per place and column.

One document asks for every one-line scalar a document being written lacks: keys as `K: 0` lines, then values
and items as `- I` lines under a key. A scalar without a line break is written on one line (the emitter breaks
lines only past its width, which the bounds here keep it from reaching), so line n of the answer is scalar n.
Text over several lines is asked alone, at its column, with a sibling after it, so the answer's end is known too.
Most scalars of a manifest need no asking: a natural number, or a word of letters, digits and `._/:-` (a name, a
version, a path), is written plain, or in single quotes when it would read back as something else
(`_proven_text`, libyaml's rules for such text); the property tests hold both ways to PyYAML's bytes.
"""
from __future__ import annotations

import re
from typing import Any

import yaml

from .yaml_emit import MAP_END, MAP_START, SEQ_END, SEQ_START, Unsupported, emitted, plain_reads_as_text, scalar_event

# libyaml's line breaks (IS_BREAK): text with one of them may be written over several lines, and is never a
# simple key
LINE_BREAKS = re.compile("[\r\n\x85\u2028\u2029]")
_SIMPLE_KEY_BYTES = 128  # libyaml writes a longer key as a complex key ("? key"), which is left to the emitter
_KEPT = 100_000  # scalars remembered per place: a long-lived process (the Argo CD plugin) stays bounded
_K, _L, _ZERO = scalar_event("k"), scalar_event("l"), scalar_event(0)


class Place:
    """The text of scalars in one place (key, value or item), from the emitter.

    `texts` and `ints` are what the writer reads on its fast path; "" in `texts` marks text written over several
    lines, found per column in `by_column` with what it leaves of the document's end (None: a quoted scalar,
    else whether this block scalar leaves the document open, which libyaml ends with "...").
    """

    def __init__(self, name: str, one_line_as: Place | None = None) -> None:
        self.name = name
        self.texts: dict[str, str] = one_line_as.texts if one_line_as else {}
        self.ints: dict[int, str] = one_line_as.ints if one_line_as else {}
        # booleans and null apart from ints (True == 1); floats by their text (0.0 == -0.0, written differently)
        self.fixed: dict[bool | None, str] = one_line_as.fixed if one_line_as else {}
        self.floats: dict[str, str] = one_line_as.floats if one_line_as else {}
        self.by_column: dict[tuple[str, int], tuple[str, bool | None]] = {}

    def size(self) -> int:
        return len(self.texts) + len(self.ints) + len(self.fixed) + len(self.floats) + len(self.by_column)

    def clear(self) -> None:
        for kept in (self.texts, self.ints, self.fixed, self.floats, self.by_column):
            kept.clear()

    def known(self, data: Any) -> str | None:
        """The text of a one-line scalar as remembered ("" for text over several lines), None if never asked."""
        kind = type(data)
        if kind is str:
            return self.texts.get(data)
        if kind is int:
            return self.ints.get(data)
        if kind is bool or data is None:
            return self.fixed.get(data)
        if kind is float:
            return self.floats.get(scalar_event(data).value)
        raise Unsupported

    def remember(self, data: Any, text: str) -> None:
        kind = type(data)
        if kind is str:
            self.texts[data] = text
        elif kind is int:
            self.ints[data] = text
        elif kind is float:
            self.floats[scalar_event(data).value] = text
        else:
            self.fixed[data] = text


KEYS, VALUES = Place("key"), Place("value")
ITEMS = Place("item", one_line_as=VALUES)
_WIDTH = [0]  # the width the places' texts were asked at: the emitter's answers are kept for one width


def prepare(width: int) -> None:
    """Forget what was asked at another width."""
    if width != _WIDTH[0]:
        for place in (KEYS, VALUES, ITEMS):
            place.clear()
        _WIDTH[0] = width


def make_room(needed: int) -> bool:
    """Forget everything once the places would hold too much (whether they did)."""
    if KEYS.size() + VALUES.size() + ITEMS.size() + needed <= 3 * _KEPT:
        return False
    for place in (KEYS, VALUES, ITEMS):
        place.clear()
    return True


def may_span_lines(place: Place, data: Any) -> bool:
    """Whether a scalar not yet asked for may be written over several lines (then asked per column); a key that
    may is Unsupported."""
    if type(data) is not str or not LINE_BREAKS.search(data):
        return False
    if place is KEYS:  # a multi-line key is a complex key ("? |"), left to the emitter
        raise Unsupported
    return True


def learn(missing: list[tuple[Place, Any, int | None]], width: int) -> None:
    """Find the text of every scalar a document lacked: one-line ones proven plain (`_proven_text`) at once, the
    other one-line ones from the emitter in one document, text over several lines from it at each column."""
    keys: dict[tuple[type, Any], Any] = {}
    values: dict[tuple[type, Any], Any] = {}  # and items
    over_lines_at: set[tuple[str, str, int]] = set()
    for place, data, column in missing:
        if column is not None:
            if (place.name, data, column) not in over_lines_at:
                over_lines_at.add((place.name, data, column))
                _learn_over_lines(place, data, column, width)
            continue
        if place is KEYS and type(data) is str and len(data.encode("utf-8")) > _SIMPLE_KEY_BYTES:
            raise Unsupported
        text = _proven_text(data, width)
        if text is not None and place is KEYS:
            KEYS.remember(data, f"{text}:")
        elif text is not None:
            VALUES.remember(data, f" {text}\n")
        else:
            # by type too: True, 1 and 1.0 are equal keys of a dict, and written differently (so are 0.0 and -0.0)
            same = (type(data), repr(data) if type(data) is float else data)
            (keys if place is KEYS else values).setdefault(same, data)
    if keys or values:
        _learn_lines(list(keys.values()), list(values.values()), width)


# Text libyaml writes plain when it reads back as text, else in single quotes, as a key or a value alike
# (yaml_emitter_analyze_scalar): printable ASCII without spaces or quotes, starting with a letter or digit (no
# indicator, no "---" or "..."), where ":" is never last (a ":" followed by a blank or the end makes a key).
_PLAIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:-]*")


def _proven_text(data: Any, width: int) -> str | None:
    """The one-line text of a scalar the emitter need not be asked about: a natural number (its digits read back
    as an integer: plain) or a word of `_PLAIN_WORD`; None for any other."""
    kind = type(data)
    if kind is int and data >= 0:
        text = str(data)
    elif kind is str and _PLAIN_WORD.fullmatch(data) and not data.endswith(":"):
        text = data if plain_reads_as_text(data) else f"'{data}'"
    else:
        return None
    return text if len(text) <= width // 4 else None


def _learn_lines(keys: list[Any], values: list[Any], width: int) -> None:
    """How the emitter writes each of `keys` as a key and `values` as a value or item, none with a line break,
    from one document."""
    events: list[yaml.Event] = [MAP_START]
    for data in keys:
        events += (scalar_event(data), _ZERO)
    if values:
        events += (_K, SEQ_START, *map(scalar_event, values), SEQ_END)
    events.append(MAP_END)
    text = emitted(events, width)
    lines = text.split("\n")
    if (len(lines) != len(keys) + (len(values) + 1 if values else 0) + 1 or lines[-1]
            or LINE_BREAKS.search(text.replace("\n", ""))):
        raise Unsupported  # not one line per scalar: nothing is remembered
    if max(map(len, lines)) > width // 4:
        raise Unsupported  # near the width the emitter may break lines: left to it
    key_lines, value_lines = lines[:len(keys)], lines[len(keys) + 1:-1]
    if (any(not line.endswith(": 0") or line.startswith("? ") for line in key_lines)
            or (values and lines[len(keys)] != "k:") or any(not line.startswith("-") for line in value_lines)):
        raise Unsupported
    for data, line in zip(keys, key_lines, strict=True):
        KEYS.remember(data, line[:-2])  # the key and its colon
    for data, line in zip(values, value_lines, strict=True):
        VALUES.remember(data, line[1:] + "\n")


def _learn_over_lines(place: Place, data: str, column: int, width: int) -> None:
    """Ask the emitter how it writes text with line breaks as a map value whose key starts at `column`, or as a
    list item whose dash does: alone in a document that nests it there, a sibling after it."""
    depth = column // 2
    if place is VALUES:
        events = [*[MAP_START, _K] * depth, MAP_START, _K, scalar_event(data), _L, _ZERO, MAP_END,
                  *[MAP_END] * depth]
        head = "".join(" " * (2 * level) + "k:\n" for level in range(depth)) + " " * column + "k:"
        tail = " " * column + "l: 0\n"
    else:  # an item of a list under a key at `column` (PyYAML's lists in maps are not indented)
        events = [*[MAP_START, _K] * (depth + 1), SEQ_START, scalar_event(data), _ZERO, SEQ_END,
                  *[MAP_END] * (depth + 1)]
        head = "".join(" " * (2 * level) + "k:\n" for level in range(depth + 1)) + " " * column + "-"
        tail = " " * column + "- 0\n"
    text = emitted(events, width)
    # a block scalar kept with its trailing line breaks ("|+") leaves the document open: the emitter ends the stream
    # with "..." unless another block scalar comes after it (libyaml's open_ended)
    open_ended = text.endswith(tail + "...\n")
    if open_ended:
        text = text[:-4]
    if not text.startswith(head) or not text.endswith(tail) or len(text) < len(head) + len(tail):
        raise Unsupported
    answer = text[len(head):len(text) - len(tail)]
    block = answer.startswith(" |")
    if (open_ended and not block) or len(answer) > width // 4:
        raise Unsupported
    place.by_column[(data, column)] = (answer, open_ended if block else None)
    place.texts[data] = ""
