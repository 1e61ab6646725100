#!/usr/bin/env python3
"""Build the focused-crawl test web (issue 27): >= 500 hosts where the hosts that copy
Wikipedia are rare, deep and named by no seed, ordinary hosts link to them, and decoy hosts
carry pages about the same articles (title-named URLs and anchors) that do not copy.

    python3 scripts/focus_web.py --out /tmp/focusweb [--data ../shared/data] [--seed 27]
        [--portals 7 --ordinary 480 --copying 24 --decoys 24] [--sitemaps]

Writes OUT/hosts/HOST/... (one directory per virtual host, `index.html` for `/`),
OUT/seeds.txt, OUT/hosts.tsv (host, kind, pages) and OUT/web.json (counts). Text is real:
copied pages carry paragraphs of the shared Wikipedia articles (the label set's source),
ordinary pages paragraphs of the shared Debian documentation, decoy pages the Wikipedia
paragraphs reworded (every sixth word dropped, sentences in another order), so no chunk of
theirs is in the label set. Deterministic for a given --seed. Nothing here is copied into
the repository; the web is generated from ../shared/data where it is used.

Structure (depth = links from a seed):
- 7 portals (the seeds, 3 pages each) list ordinary hosts only (each a seventh of them and
  10 more at random);
- 480 ordinary hosts: home -> 2 sections -> 3-9 articles of Debian text; home pages carry a
  few "friends" links (mostly ordinary hosts, 1 in 5 home pages one copying or decoy host's
  home, named by its site name), and 1 ordinary host in 5 has an article with a "further
  reading" link to a copying or decoy article page, named by the article's title;
- 24 copying hosts: home -> 4 categories -> 2 lists each -> 5 copied articles each (40
  copies of Wikipedia articles a host, with ads and navigation), so copies are 3 links deep
  inside their host and at least 5 from a seed;
- 24 decoy hosts: the same shape, URLs and anchors as copying hosts, reworded text.
Half of the copying and decoy hosts name article pages by title (/wiki/Abraham_Lincoln.html),
half by number (/p/1234.html).

With --sitemaps (issue 38) the same web (same pages, links and text: no random draw changes)
also has sitemaps listing every page of their host, by the host's place in its kind's list:
one host in three has a robots.txt whose `Sitemap:` line names `/sitemap_index.xml`, an index
of a gzipped urlset (`/sitemaps/pages.xml.gz`); one in three a plain `/sitemap.xml` (no
robots.txt); one in three none. Sitemap files are not pages (hosts.tsv counts pages only).
"""

import gzip

import argparse
import html
import json
import os
import random
import re
from html.parser import HTMLParser
from pathlib import Path

SUFFIX = "focus.test"
N_PORTALS = 7
N_ORDINARY = 480
N_COPY = 24
N_DECOY = 24
CATEGORIES = ["History", "Science", "People", "Places", "Culture", "Nature", "Ideas", "Technology"]
WORDS = (
    "amber birch cedar delta ember fable grove harbor island juniper kestrel lantern meadow "
    "nectar orchard pebble quarry raven saffron tundra umber valley willow yonder zephyr "
    "acorn basalt canyon dune estuary fjord glacier heath inlet lagoon mesa oasis prairie "
    "reef savanna taiga upland vale wetland atoll bayou cove dell"
).split()


class Paras(HTMLParser):
    """Text of <p> elements and the <title>."""

    def __init__(self):
        super().__init__()
        self.paras, self.cur, self.in_p, self.in_title, self.title = [], [], 0, False, ""

    def handle_starttag(self, tag, attrs):
        if tag == "p":
            self.in_p += 1
            self.cur = []
        elif tag == "title":
            self.in_title = True

    def handle_endtag(self, tag):
        if tag == "p" and self.in_p:
            self.in_p -= 1
            text = " ".join("".join(self.cur).split())
            if text:
                self.paras.append(text)
        elif tag == "title":
            self.in_title = False

    def handle_data(self, data):
        if self.in_p:
            self.cur.append(data)
        if self.in_title:
            self.title += data


def read_paras(path):
    p = Paras()
    p.feed(path.read_text(encoding="utf-8", errors="replace"))
    return p.title.strip(), p.paras


def reword(para, rng):
    """The paragraph on the same topic, not a copy: every sixth word dropped, sentences
    rotated."""
    sentences = re.split(r"(?<=[.!?])\s+", para)
    if len(sentences) > 1:
        k = rng.randrange(1, len(sentences))
        sentences = sentences[k:] + sentences[:k]
    words = " ".join(sentences).split()
    kept = [w for i, w in enumerate(words) if i % 6 != 5]
    return "It is said that " + " ".join(kept)


def page(title, body, links_html=""):
    return (
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>"
        + html.escape(title)
        + "</title></head><body>\n"
        + body
        + links_html
        + "\n</body></html>\n"
    )


def a(href, text):
    return '<a href="%s">%s</a>' % (html.escape(href, quote=True), html.escape(text))


def slug(title):
    return re.sub(r"[^A-Za-z0-9()_,.-]", "_", title.replace(" ", "_"))


def read_texts(data, rng, filler_min, filler_max):
    """Wikipedia articles (the label set's sources: title and paragraphs over 120 chars, 3 at
    least) and Debian documentation paragraphs of filler_min..filler_max chars as filler,
    distinct and shuffled by rng; exits when --data holds too little."""
    articles = []
    for f in sorted((data / "wikipedia" / "articles").glob("*.html")):
        title, paras = read_paras(f)
        paras = [p for p in paras if len(p) > 120]
        if title and len(paras) >= 3:
            articles.append((title, paras))
    filler = []
    for d in sorted((data / "reuse" / "site").iterdir()):
        if ".en." not in d.name and not d.name.startswith("llvm-15"):
            continue
        for f in sorted(d.rglob("*.html")):
            _, paras = read_paras(f)
            filler.extend(p for p in paras if filler_min < len(p) < filler_max)
    filler = sorted(set(filler))
    rng.shuffle(filler)
    if len(articles) < 40 or len(filler) < 500:
        raise SystemExit("not enough text under --data")
    return articles, filler


def main():
    global SUFFIX
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--data", default=str(Path(__file__).resolve().parent.parent.parent / "shared" / "data"))
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument("--portals", type=int, default=N_PORTALS)
    ap.add_argument("--ordinary", type=int, default=N_ORDINARY)
    ap.add_argument("--copying", type=int, default=N_COPY)
    ap.add_argument("--decoys", type=int, default=N_DECOY)
    ap.add_argument("--sitemaps", action="store_true", help="also write sitemaps (see above)")
    ap.add_argument("--suffix", default=SUFFIX,
                    help="hosts are NAME.SUFFIX; `test` puts every host on a registrable domain of its own")
    args = ap.parse_args()
    SUFFIX = args.suffix
    rng = random.Random(args.seed)
    data = Path(args.data)
    out = Path(args.out)
    hosts_dir = out / "hosts"
    if hosts_dir.exists():
        raise SystemExit(f"{hosts_dir} exists: remove it first")

    articles, filler = read_texts(data, rng, 80, 1200)

    names = set()

    def name(kind):
        while True:
            n = "%s%s%d" % (rng.choice(WORDS), rng.choice(WORDS), rng.randrange(1000))
            if n not in names:
                names.add(n)
                return n

    portals = ["portal%d" % i for i in range(1, args.portals + 1)]
    ordinary = [name("o") for _ in range(args.ordinary)]
    copying = [name("c") for _ in range(args.copying)]
    decoys = [name("d") for _ in range(args.decoys)]
    site_name = {h: "%s %s" % (h.rstrip("0123456789").capitalize(), "Pages") for h in ordinary + copying + decoys}

    files = {}  # (host, path) -> html
    kind_of = {}

    def url(host, path="/"):
        return "http://%s.%s%s" % (host, SUFFIX, path)

    def put(host, path, text):
        files[(host, path)] = text

    # Copying and decoy hosts: home -> categories -> lists -> articles.
    deep_targets = {"copy": [], "decoy": []}  # (url, title)
    for kind, hosts in (("copy", copying), ("decoy", decoys)):
        for hi, h in enumerate(hosts):
            kind_of[h] = kind
            by_title = hi % 2 == 0
            cats = rng.sample(CATEGORIES, 4)
            chosen = rng.sample(range(len(articles)), 40)
            art_paths = []
            for n, ai in enumerate(chosen):
                title = articles[ai][0]
                path = "/wiki/%s.html" % slug(title) if by_title else "/p/%d.html" % (1000 + n * 7 + hi)
                art_paths.append((path, ai))
            nav = "<ul>" + "".join("<li>" + a("/c/%d.html" % k, c) + "</li>" for k, c in enumerate(cats)) + "</ul>"
            put(h, "/", page(site_name[h], "<h1>%s</h1>\n%s<p>%s</p>" % (
                html.escape(site_name[h]), nav, html.escape("Welcome. Browse the sections above."))))
            for k, c in enumerate(cats):
                lists = "".join("<li>" + a("/c/%d-%d.html" % (k, j), "%s, part %d" % (c, j + 1)) + "</li>" for j in range(2))
                put(h, "/c/%d.html" % k, page(c, "<h1>%s</h1><ul>%s</ul>%s" % (html.escape(c), lists, nav)))
                for j in range(2):
                    items = art_paths[(k * 2 + j) * 5:(k * 2 + j) * 5 + 5]
                    li = "".join("<li>" + a(p, articles[ai][0]) + "</li>" for p, ai in items)
                    put(h, "/c/%d-%d.html" % (k, j), page("%s %d" % (c, j + 1), "<h1>%s</h1><ul>%s</ul>%s" % (html.escape(c), li, nav)))
            for n, (path, ai) in enumerate(art_paths):
                title, paras = articles[ai]
                take = paras[: rng.randint(3, min(8, len(paras)))]
                if kind == "decoy":
                    take = [reword(p, rng) for p in take]
                body = "<h1>%s</h1>\n" % html.escape(title)
                body += "".join("<p>%s</p>\n" % html.escape(p) for p in take)
                body += '<div class="ad">Sponsored: best deals on %s today</div>\n' % html.escape(rng.choice(WORDS))
                related = rng.sample(art_paths, 3)
                body += "<ul>" + "".join("<li>" + a(p, articles[x][0]) + "</li>" for p, x in related) + "</ul>" + nav
                put(h, path, page(title, body))
                deep_targets[kind].append((url(h, path), title))

    # Ordinary hosts: home -> sections -> articles of Debian text.
    fi = 0
    links_to = {"copy": 0, "decoy": 0}
    home_extra = {}
    article_extra = {}
    for h in ordinary:
        kind_of[h] = "ordinary"
        friends = [url(x) for x in rng.sample(ordinary, 3) if x != h]
        extra = []
        if rng.random() < 0.2:
            k = rng.choice(["copy", "decoy"] if decoys else ["copy"])
            target = rng.choice(copying if k == "copy" else decoys)
            extra.append((url(target), site_name[target]))
            links_to[k] += 1
        home_extra[h] = [(f, site_name[f.split("//")[1].split(".")[0]]) for f in friends] + extra
        if rng.random() < 0.2:
            k = rng.choice(["copy", "decoy"] if decoys else ["copy"])
            target, title = rng.choice(deep_targets[k])
            article_extra[h] = (target, title)
            links_to[k] += 1
    for h in ordinary:
        n_art = rng.randint(3, 9)
        secs = [[], []]
        for i in range(n_art):
            secs[i % 2].append("/doc/%d.html" % i)
        friends = "<h2>Friends</h2><ul>" + "".join("<li>" + a(u, t) + "</li>" for u, t in home_extra[h]) + "</ul>"
        sec_links = "<ul>" + "".join("<li>" + a("/s/%d.html" % s, "Section %d" % (s + 1)) + "</li>" for s in range(2)) + "</ul>"
        intro = filler[fi % len(filler)]
        fi += 1
        put(h, "/", page(site_name[h], "<h1>%s</h1>%s<p>%s</p>%s" % (html.escape(site_name[h]), sec_links, html.escape(intro), friends)))
        for s in range(2):
            li = "".join("<li>" + a(p, "Note %s" % p.split("/")[-1].split(".")[0]) + "</li>" for p in secs[s])
            put(h, "/s/%d.html" % s, page("Section %d" % (s + 1), "<h1>Section %d</h1><ul>%s</ul>%s" % (s + 1, li, a("/", "Home"))))
        extra_at = rng.randrange(n_art)
        for i in range(n_art):
            paras = [filler[(fi + j) % len(filler)] for j in range(rng.randint(3, 7))]
            fi += len(paras)
            body = "<h1>Note %d</h1>\n" % i + "".join("<p>%s</p>\n" % html.escape(p) for p in paras)
            if h in article_extra and i == extra_at:
                target, title = article_extra[h]
                body += "<p>Further reading: %s</p>\n" % a(target, title)
            nxt = "/doc/%d.html" % ((i + 1) % n_art)
            body += "<p>%s | %s</p>" % (a(nxt, "Next note"), a("/", "Home"))
            put(h, "/doc/%d.html" % i, page("Note %d" % i, body))

    # Portals: the seeds; each lists a share of the ordinary hosts over 3 pages.
    for pi, p in enumerate(portals):
        kind_of[p] = "portal"
        mine = [h for j, h in enumerate(ordinary) if j % len(portals) == pi]
        mine += rng.sample(ordinary, min(10, len(ordinary)))
        chunks = [mine[i::3] for i in range(3)]
        for k, part in enumerate(chunks):
            li = "".join("<li>" + a(url(h), site_name[h]) + "</li>" for h in part)
            more = "".join(a("/%d.html" % j if j else "/", "Page %d" % (j + 1)) + " " for j in range(3))
            put(p, "/%d.html" % k if k else "/", page("Portal %d" % (pi + 1), "<h1>Directory</h1><ul>%s</ul><p>%s</p>" % (li, more)))

    for (h, path), text in files.items():
        fp = hosts_dir / ("%s.%s" % (h, SUFFIX)) / (path.lstrip("/") or "index.html")
        if path.endswith("/"):
            fp = fp / "index.html" if path != "/" else fp
        fp.parent.mkdir(parents=True, exist_ok=True)
        fp.write_text(text, encoding="utf-8")

    pages = {}
    for (h, _path) in files:
        pages[h] = pages.get(h, 0) + 1

    sitemap_kinds = {"index": 0, "plain": 0, "none": 0}
    if args.sitemaps:
        by_host = {}
        for (h, path) in sorted(files):
            by_host.setdefault(h, []).append(url(h, path))
        for hosts in (portals, ordinary, copying, decoys):
            for i, h in enumerate(hosts):
                d = hosts_dir / ("%s.%s" % (h, SUFFIX))
                urlset = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                          '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
                          + "".join("<url><loc>%s</loc></url>\n" % html.escape(u) for u in by_host[h])
                          + "</urlset>\n")
                if i % 3 == 0:
                    sitemap_kinds["index"] += 1
                    (d / "sitemaps").mkdir(parents=True, exist_ok=True)
                    (d / "sitemaps" / "pages.xml.gz").write_bytes(gzip.compress(urlset.encode(), mtime=0))
                    (d / "sitemap_index.xml").write_text(
                        '<?xml version="1.0" encoding="UTF-8"?>\n'
                        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                        "<sitemap><loc>%s</loc></sitemap></sitemapindex>\n" % url(h, "/sitemaps/pages.xml.gz"),
                        encoding="utf-8")
                    (d / "robots.txt").write_text("User-agent: *\nDisallow:\nSitemap: %s\n" % url(h, "/sitemap_index.xml"),
                                                  encoding="utf-8")
                elif i % 3 == 1:
                    sitemap_kinds["plain"] += 1
                    (d / "sitemap.xml").write_text(urlset, encoding="utf-8")
                else:
                    sitemap_kinds["none"] += 1
    with open(out / "hosts.tsv", "w") as f:
        for h in sorted(pages):
            f.write("%s.%s\t%s\t%d\n" % (h, SUFFIX, kind_of[h], pages[h]))
    with open(out / "seeds.txt", "w") as f:
        for p in portals:
            f.write(url(p) + "\n")
    counts = {
        "hosts": len(pages),
        "pages": len(files),
        "by_kind": {k: {"hosts": sum(1 for h in pages if kind_of[h] == k),
                        "pages": sum(n for h, n in pages.items() if kind_of[h] == k)}
                    for k in ("portal", "ordinary", "copy", "decoy")},
        "ordinary_links_to": links_to,
        "sitemaps": sitemap_kinds,
        "seed": args.seed,
    }
    (out / "web.json").write_text(json.dumps(counts, indent=2) + "\n")
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
