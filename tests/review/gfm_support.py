"""The pull-request comment as GitHub shows it, near enough to test: Markdown rendered by markdown-it-py with
GitHub's extensions (tables, strikethrough, autolinks of `www.` and `scheme://`, raw HTML allowed as GitHub allows
it), then read back as HTML elements and text."""
from __future__ import annotations

import re
from html.parser import HTMLParser

from markdown_it import MarkdownIt

# what GitHub turns into a notification: `@user` or `@org/team` inside one text node, outside code and links
MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9][A-Za-z0-9-]*(?:/[A-Za-z0-9_.-]+)?")


def render_gfm(markdown: str) -> str:
    md = MarkdownIt("gfm-like", {"html": True})
    md.linkify.set({"fuzzy_link": False})  # GitHub links `www.` and `scheme://`, not every bare domain
    return md.render(markdown)


class Page(HTMLParser):
    """Every element opened and closed, and the text nodes outside code."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.opened: list[str] = []
        self.closed: list[str] = []
        self.texts: list[str] = []  # text nodes outside <code> and <pre>
        self.all_text: list[str] = []
        self._code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.opened.append(tag)
        self._code += tag in ("code", "pre")

    def handle_endtag(self, tag: str) -> None:
        self.closed.append(tag)
        self._code -= tag in ("code", "pre")

    def handle_data(self, data: str) -> None:
        self.all_text.append(data)
        if not self._code:
            self.texts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.all_text)

    def mentions(self) -> list[str]:
        return [m for node in self.texts for m in MENTION.findall(node)]


def read_page(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page
