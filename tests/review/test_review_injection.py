"""No report injection: hostile values in golden/ and environment files stay text in the pull-request comment.

The comment is rendered as GitHub renders it (gfm_support: markdown-it-py with tables, strikethrough, autolinks
and raw HTML) and read back: no element a value made, no mention, no link, every <details> closed, and the
values still readable as they are.
"""
from __future__ import annotations

import json

import pytest
from gfm_support import read_page, render_gfm
from review_support import edit, run

from compiler.project.paths import Project
from compiler.review.markup import code, html_text, prose, rich

HOSTILE = ("x ``</details>`` <img src=x onerror=alert(1)> @org/team [click](https://evil.example/a) "
           "https://evil.example/b www.evil.example *bold* ~~gone~~ | cell &amp; <script>alert(1)</script>")
HOSTILE_KEY = "evil``</details><img src=y>@org/keys"
HOSTILE_TEXT = "line one\n```\n</details>\n@org/team <b>bold</b>\n    ```\nhttps://evil.example/c\n"
ALLOWED = {"h2", "h3", "p", "strong", "em", "code", "pre", "table", "thead", "tbody", "tr", "th", "td", "details",
           "summary", "ul", "li", "span", "br"}


def _assert_inert(markdown: str) -> None:
    page = read_page(render_gfm(markdown))
    assert set(page.opened) <= ALLOWED, set(page.opened) - ALLOWED
    assert page.opened.count("details") == page.closed.count("details")
    assert page.mentions() == []


@pytest.mark.parametrize("shown", [prose, rich, lambda v: code(v), lambda v: f"| a |\n|---|\n| {code(v, True)} |"])
def test_each_escape_keeps_a_hostile_value_text(shown):
    for value in (HOSTILE, HOSTILE_KEY, "`", "``", " `lead", "trail` ", "a\n\nb"):
        html = render_gfm(f"<details><summary>s</summary>\n\n{shown(value)}\n\n</details>\n")
        page = read_page(html)
        assert set(page.opened) <= ALLOWED and page.opened.count("details") == page.closed.count("details"), html
        assert page.mentions() == [] and "a" not in page.opened
        if "\n" not in value and shown is not rich:  # rich reads backticks as krc's own code marks
            # what the reader sees is the value (the table cell's \| is GitHub's own escape)
            assert value.strip() in page.text.replace("\\|", "|") or value.strip("` ") in page.text


def test_raw_html_text_is_one_summary_line():
    summary = f"<details><summary>{html_text(HOSTILE + chr(10) * 2 + '# heading')}</summary>\n\nbody\n\n</details>\n"
    page = read_page(render_gfm(summary))
    assert [tag for tag in page.opened if tag != "span"] == ["details", "summary", "p"] and page.mentions() == []
    assert "<img src=x onerror=alert(1)>" in page.text and "\\n\\n# heading" in page.text


def test_hostile_golden_values_stay_text_in_the_comment(accepted: Project):
    golden = accepted.golden_dir / "dev" / "manifests" / "raycluster-ray-cpu-demo.yaml"
    edit(golden, "    krc.dev/source: clusters.ray-cpu-demo\n",
         f"    krc.dev/source: {json.dumps(HOSTILE)}\n    {json.dumps(HOSTILE_KEY)}: x\n"
         f"    krc.dev/notes: {json.dumps(HOSTILE_TEXT)}\n")
    result = run(accepted, "diff", "dev", "--format", "markdown")
    assert result.exit_code == 1, result.output
    _assert_inert(result.output)
    page = read_page(render_gfm(result.output))
    # the reader still reads every value as it is
    for visible in ("<img src=x onerror=alert(1)>", "</details>", "@org/team", "https://evil.example/b",
                    "<script>alert(1)</script>", "evil``</details><img src=y>@org/keys"):
        assert visible in page.text, visible
