"""The visible text of a page for the Python peer scripts, by the truth's extractor rules
(html.parser; script, style, noscript, template and head dropped; block tags are line
breaks)."""
from html.parser import HTMLParser


SKIP = {"script", "style", "noscript", "template", "head"}
BLOCK = {
    "p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "td", "th", "tr",
    "table", "br", "dd", "dt", "dl", "blockquote", "section", "article", "header", "footer",
    "nav", "aside", "main", "hr", "title", "form", "figure", "figcaption", "caption",
}


class BlockText(HTMLParser):
    """The visible text, a line break at each block tag, in `out` (a list of pieces)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in SKIP:
            self.skip += 1
        elif tag in BLOCK:
            self.out.append("\n")

    def handle_startendtag(self, tag, attrs):
        if tag in BLOCK:
            self.out.append("\n")

    def handle_endtag(self, tag):
        if tag in SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag in BLOCK:
            self.out.append("\n")

    def handle_data(self, data):
        if not self.skip:
            self.out.append(data)


def block_text(html):
    """The visible text of `html` with a line break at each block tag."""
    p = BlockText()
    p.feed(html)
    p.close()
    return "".join(p.out)
