"""What the Python peer scripts share: their own virtual environment with datasketch, and the
visible text of a page as the truth's extractor rules give it (html.parser; script, style,
noscript, template and head dropped; block tags are line breaks)."""
import os
import subprocess
import sys
from html.parser import HTMLParser


def ensure_venv(venv):
    """Re-run this script under `venv`'s Python with datasketch 2.0.0, making it on first use."""
    try:
        import datasketch  # noqa: F401

        return
    except ImportError:
        pass
    vpy = os.path.join(venv, "bin", "python")
    if os.path.abspath(sys.executable) == os.path.abspath(vpy):
        sys.exit("datasketch is missing from " + venv)
    if not os.path.exists(vpy):
        subprocess.check_call([sys.executable, "-m", "venv", venv])
    if subprocess.run([vpy, "-c", "import datasketch"], capture_output=True).returncode != 0:
        subprocess.check_call([vpy, "-m", "pip", "install", "-q", "datasketch==2.0.0"])
    os.execv(vpy, [vpy] + sys.argv)


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
