"""Readable text from HTML with the standard library's parser: no scripts, styles or markup.

The text is still untrusted (a page may say "ignore your instructions"): it goes to the model
as a tool result, which is the only place the runtime puts tool output.
"""

import re
from html.parser import HTMLParser
from typing import Final

_SKIPPED: Final = frozenset({"script", "style", "noscript", "template", "svg", "math", "iframe", "object"})
_BLOCKS: Final = frozenset(
    {
        "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption", "figure",
        "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol",
        "p", "pre", "section", "table", "tr", "ul",
    }
)  # fmt: skip
_SPACES: Final = re.compile(r"[ \t\r\f\v\u00a0]+")


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self._skip_depth = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _SKIPPED:
            self._skip_depth += 1
        elif tag in _BLOCKS:
            self.parts.append("\n- " if tag == "li" else "\n")
        elif tag in ("td", "th"):
            self.parts.append(" | ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # <br/> and <hr/> break lines; a self-closed skipped tag must not open a skipped region.
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _SKIPPED:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif self._skip_depth == 0:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """The visible text of an HTML document, one block per line, the title first as `# title`."""
    extractor = _TextExtractor()
    extractor.feed(html)
    extractor.close()
    lines = [_SPACES.sub(" ", line).strip() for line in "".join(extractor.parts).split("\n")]
    text = "\n".join(line for line in lines if line and line != "|")
    title = _SPACES.sub(" ", " ".join(extractor.title)).strip()
    return f"# {title}\n\n{text}" if title else text
