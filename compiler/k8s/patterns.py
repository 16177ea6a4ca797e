"""Regular expressions as schemas mean them: a CRD's OpenAPI `pattern` (read by the API server's Go regexp) and a
JSON Schema `pattern` (ECMA-262) both match `$` at the end of the text only. Python's `$` also matches before a
final newline, so `^[a-z]+$` would accept "ray\\n", a name the API server refuses. `schema_regex` compiles a
pattern with each such `$` read as `\\Z`; everything else is read by Python's `re` as written (the patterns CRDs
and our schema use are, in practice, the subset the three dialects share). Patterns are searched, unanchored,
as all three do.
"""
from __future__ import annotations

import functools
import re


def end_of_text_anchors(pattern: str) -> str:
    """`pattern` with every `$` that is an anchor (not escaped, not inside a character class) written `\\Z`."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            out.append(char)
            i += 1
            for literal in ("^", "]"):  # `[^` negates; a `]` right after the bracket is a literal in Python's re
                if pattern.startswith(literal, i):
                    out.append(literal)
                    i += 1
            continue
        elif char == "$":
            out.append(r"\Z")
            i += 1
            continue
        out.append(char)
        i += 1
    return "".join(out)


@functools.cache
def schema_regex(pattern: str) -> re.Pattern[str]:
    """The compiled pattern, `$` meaning the end of the text; re.error for a pattern Python cannot read."""
    return re.compile(end_of_text_anchors(pattern))
