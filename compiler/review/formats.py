"""The review's output formats, by name: what `krc diff --format` offers is this registry's keys."""
from __future__ import annotations

from collections.abc import Callable

from .format_html import format_html
from .format_json import format_json
from .format_markdown import format_markdown
from .format_text import format_text
from .model import Review

FORMATTERS: dict[str, Callable[[Review], str]] = {
    "text": format_text, "markdown": format_markdown, "json": format_json, "html": format_html}
FORMATS = tuple(FORMATTERS)


def format_review(review: Review, output_format: str) -> str:
    return FORMATTERS.get(output_format, format_text)(review)
