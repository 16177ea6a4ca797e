"""`krc diff --format html`: the review as one self-contained page, for CI artifacts.

The page is the pull-request comment's content without its size budget (an artifact has no 65,536-character
limit), rendered from the same Markdown with markdown-it-py (CommonMark, GFM tables and strikethrough; the user
values in it are escaped already: review/markup.py), with the pictures drawn as inline SVG and HTML instead of
Mermaid, which would need a script. It loads nothing and runs nothing: styles are inline, and its Content
Security Policy forbids every script, connection, frame and outside image, so a value that got through could
not act either.
"""
from __future__ import annotations

import html

from markdown_it import MarkdownIt

from .diagrams import capacity_svg, sync_html
from .format_markdown import format_markdown
from .model import EnvironmentReview, Review

UNBUDGETED = 1 << 40  # the page shows everything: no comment limit applies to a file
POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 78rem; padding: 0 1rem; color: #1f2328; }
table { border-collapse: collapse; margin: .5rem 0; display: block; overflow-x: auto; }
th, td { border: 1px solid #d0d7de; padding: .25rem .5rem; vertical-align: top; }
code, pre { font: 12px/1.4 ui-monospace, monospace; background: #f6f8fa; }
pre { padding: .5rem; overflow-x: auto; }
details { border: 1px solid #d0d7de; border-radius: 6px; padding: .25rem .75rem; margin: .5rem 0; }
summary { cursor: pointer; }
figure { margin: .75rem 0; }
figcaption { font-weight: 600; margin-bottom: .25rem; }
ol.waves { display: flex; gap: 1.5rem; list-style: none; padding: 0; flex-wrap: wrap; }
li.wave { border: 1px solid #8c959f; border-radius: 6px; padding: .5rem .75rem; }
li.wave + li.wave::before { content: "→ "; }
.wave-name { font-weight: 600; }
.syncs { color: #59636e; }
svg text { font: 12px system-ui, sans-serif; fill: #1f2328; }
rect.bar { fill: #0969da; } rect.over { fill: #cf222e; }
line.limit { stroke: #cf222e; stroke-width: 2; stroke-dasharray: 4 3; }
"""


class _Pictures:
    """Stands in for each environment's pictures while the Markdown is rendered, then draws them."""

    def __init__(self) -> None:
        self.drawn: list[str] = []

    def __call__(self, env: EnvironmentReview) -> str:
        picture = sync_html(env) + capacity_svg(env)
        if not picture:
            return ""
        self.drawn.append(picture)
        # an HTML comment on lines of its own is an HTML block: markdown-it passes it through as it is
        return f"<!-- krc-picture-{len(self.drawn) - 1} -->\n\n"

    def put_back(self, page: str) -> str:
        for index, picture in enumerate(self.drawn):
            page = page.replace(f"<!-- krc-picture-{index} -->", picture, 1)
        return page


def html_page(review: Review) -> str:
    pictures = _Pictures()
    markdown = format_markdown(review, UNBUDGETED, pictures)
    renderer = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    body = pictures.put_back(renderer.render(markdown))
    title = f"krc diff: {review.base}"
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n")
