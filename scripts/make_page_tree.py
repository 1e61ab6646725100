#!/usr/bin/env python3
"""A folder of small HTML pages laid out DIR/HOST/PATH, for scan benchmarks (issue 39).

    scripts/make_page_tree.py /tmp/pages [HOSTS [SECTIONS [PAGES]]]

Defaults: 60 hosts x 10 sections x 100 pages = 60,000 pages of about 10 KB each
(HOST = hNN.test, PATH = sMM/pKKKK.html). A page is its host's template (navigation and
footer, the same on every page of the host) around 13 paragraphs of 5 sentences drawn from
the sentences of the shared Wikipedia articles (../shared/data/wikipedia/articles, found
from this script's place; so nearly every paragraph is unique and pages differ in vocabulary
as real ones do), and on about a third of the pages 1 to 3 paragraphs from a pool of 500
shared ones (text copied across hosts). Deterministic (fixed seed).
"""
import html
import re
import random
import sys
from pathlib import Path



def article_sentences():
    """Sentences of 40 to 300 characters from the paragraphs of the shared articles."""
    root = Path(__file__).resolve().parent.parent / "../shared/data/wikipedia/articles"
    out = []
    for f in sorted(root.glob("*.html")):
        for para in re.findall(r"<p[^>]*>(.*?)</p>", f.read_text(errors="replace"), re.S):
            text = html.unescape(re.sub(r"<[^>]+>", "", para))
            text = re.sub(r"\[\d+\]|\s+", " ", text)
            for sent in re.split(r"(?<=[.!?]) ", text):
                if 40 <= len(sent) <= 300:
                    out.append(html.escape(sent.strip()))
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    hosts = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    sections = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    pages = int(sys.argv[4]) if len(sys.argv) > 4 else 100
    rng = random.Random(39)
    sentences = article_sentences()
    shared = [" ".join(rng.choices(sentences, k=5)) for _ in range(500)]
    total = 0
    for h in range(hosts):
        host = "h%02d.test" % h
        nav = "".join('<li><a href="/s%02d/">Section %d of %s</a></li>' % (s, s, host) for s in range(sections))
        head = "<!doctype html><html><head><title>%%s</title></head><body><ul class=nav>%s</ul><main>" % nav
        foot = "</main><footer>Copyright %s. All pages of %s are made up for a benchmark.</footer></body></html>" % (
            host,
            host,
        )
        for s in range(sections):
            d = out / host / ("s%02d" % s)
            d.mkdir(parents=True, exist_ok=True)
            for p in range(pages):
                paras = [" ".join(rng.choices(sentences, k=5)) for _ in range(13)]
                if rng.random() < 0.33:
                    for _ in range(rng.randint(1, 3)):
                        paras.insert(rng.randrange(len(paras)), rng.choice(shared))
                title = "Page %d of section %d, %s" % (p, s, host)
                body = (head % title) + "<h1>%s</h1>" % title + "".join("<p>%s</p>" % t for t in paras) + foot
                data = body.encode()
                (d / ("p%04d.html" % p)).write_bytes(data)
                total += len(data)
    print("%d pages, %d bytes under %s (%d sentences)" % (hosts * sections * pages, total, out, len(sentences)))


if __name__ == "__main__":
    main()
