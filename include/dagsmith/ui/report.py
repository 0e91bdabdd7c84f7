"""A run's answer.md as HTML for the run's report page: Markdown rendered without raw HTML, plots by position."""

from __future__ import annotations

from collections.abc import Callable

from markdown_it import MarkdownIt


def render_report(markdown: str, image_url: Callable[[str], str | None]) -> str:
    """``markdown`` as HTML. Raw HTML in it is shown as text (a goal or a step's report cannot add markup), and
    each image source is replaced by ``image_url(source)``; an image it does not know is dropped."""
    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = parser.parse(markdown)
    for token in tokens:
        for child in token.children or []:
            if child.type == "image":
                url = image_url(str(child.attrGet("src") or ""))
                child.attrSet("src", url or "")
                if url is None:
                    child.type, child.content, child.children = "text", "", []
    return parser.renderer.render(tokens, parser.options, {})
