"""User values in the pull-request comment and the HTML page, escaped so they stay text.

A value from an environment file, a golden file or a chart reaches the comment: it must not close the code span
or `<details>` block around it, nor become markup (`<img src=…>`, emphasis, a table column), a mention
(`@org/team` notifies a team) or a link. Three places, three rules:

- `code`: a Markdown code span, fenced by one backtick more than the longest run inside; in a table cell `|`
  is written `\\|` (GFM splits cells before it reads code spans). Code spans make no links or mentions.
- `prose`: Markdown text: `<` and `&` as entities, Markdown punctuation backslash-escaped, and the characters a
  mention or an autolink starts from (`@`, `//`, `www.`) each in a `<span>` of their own, so GitHub never sees
  `@team` or `https://` in one text node and the reader still reads the same characters.
- `rich`: a message krc wrote: its backtick-marked parts as code spans, the rest as prose.
- `html_text`: raw HTML (a `<summary>` line, the HTML page): entities, and the mention and link breaks.

Newlines inside a value are shown as `\\n` everywhere: a blank line would end a `<details>` HTML block.
"""
from __future__ import annotations

import html
import json
import re
from typing import Any

# what starts markup inline: `(`, `!` and `#` mean nothing without `[` or a line start, so they stay readable
_MARKDOWN_PUNCTUATION = frozenset("\\`*_[]~|")
_LINK_STARTS = re.compile(r"@|//|(?i:www)\.")
_BACKTICKS = re.compile(r"`+")


def one_line(text: str) -> str:
    return text.replace("\r", "\\r").replace("\n", "\\n")


def _broken_links(escaped: str) -> str:
    """Mentions and autolinks broken apart in text already free of `<` (see the module's docstring)."""
    def broken(match: re.Match[str]) -> str:
        found = match[0]
        if found == "@":
            return "<span>@</span>"
        if found == "//":  # `https://` and a protocol-relative `//host` alike
            return "/<span>/</span>"
        return found[:-1] + "<span>.</span>"
    return _LINK_STARTS.sub(broken, escaped)


def html_text(value: Any) -> str:
    """A value inside raw HTML: no tag, no entity of its own, no mention, no link."""
    return _broken_links(html.escape(one_line(str(value)), quote=True))


def prose(value: Any) -> str:
    """A value inside Markdown text (also safe in a table cell)."""
    out = []
    text = one_line(str(value))
    for index, char in enumerate(text):
        if char in "<&":  # no tag, no entity (`>` alone is none, and inline no quote either)
            out.append(html.escape(char))
        elif char == "_" and text[index - 1:index].isalnum() and text[index + 1:index + 2].isalnum():
            out.append(char)  # inside a word `_` neither opens nor closes emphasis: KRC_CHART_REPOSITORY
        elif char in _MARKDOWN_PUNCTUATION:
            out.append("\\" + char)
        else:
            out.append(char)
    return _broken_links("".join(out))


def rich(text: str) -> str:
    """A message krc wrote, which marks commands and names with backticks (`helm upgrade`) around values that
    may come from a user: each marked part becomes a code span, the rest prose, so every piece is escaped."""
    parts = one_line(text).split("`")
    if len(parts) % 2 == 0:  # an odd backtick is not krc's: the last part stays prose
        parts[-2:] = [parts[-2] + "`" + parts[-1]]
    return "".join(code(part) if index % 2 else prose(part) for index, part in enumerate(parts) if part or index % 2)


def code(value: Any, table: bool = False) -> str:
    """`value` as one Markdown code span (JSON for data); in a table cell when `table`."""
    text = one_line(value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False))
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    if table:
        text = text.replace("|", "\\|")
    # a space on both sides keeps a backtick at either end, or spaces at both ends, as they are (CommonMark
    # strips exactly one space from each side when both are there)
    padded = f" {text} " if text.startswith(("`", " ")) or text.endswith(("`", " ")) else text
    return f"{fence}{padded}{fence}" if text else "` `"


def fence(lines: list[str], language: str) -> tuple[str, str]:
    """Opening and closing lines of a fenced block no line inside can close (a closing fence may be indented by
    up to three spaces)."""
    longest = max((len(run) for line in lines for run in _BACKTICKS.findall(line)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{language}\n", f"{marks}\n"
