"""The review's output formats, by name: what `krc diff --format` offers is this registry's keys.

The HTML page's module is the package's lazily loaded `html_page`: it loads markdown-it (30-40 ms of a `krc diff`'s
start) only when a page is asked for (`--format html`, `--output html=...`)."""
from __future__ import annotations

from collections.abc import Callable

from .. import review
from .format_json import format_json
from .format_markdown import format_markdown
from .format_text import format_text
from .model import Review


def _html(result: Review) -> str:
    return review.html_page(result)


FORMATTERS: dict[str, Callable[[Review], str]] = {
    "text": format_text, "markdown": format_markdown, "json": format_json, "html": _html}
FORMATS = tuple(FORMATTERS)


def format_review(review: Review, output_format: str) -> str:
    return FORMATTERS.get(output_format, format_text)(review)
