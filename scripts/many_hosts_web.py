#!/usr/bin/env python3
"""Build a loopback web of many small hosts (issue 37, "Must show": the crawler at 1,000,
10,000 and 100,000 hosts), for scripts/bench_many_hosts_nginx.sh.

    python3 scripts/many_hosts_web.py --out /tmp/many/web-10000 --hosts 10000
        [--addresses 8] [--data ../shared/data] [--seed 37] [--copy-every 50] [--links 3]

Writes OUT/hosts/HOST/{index.html,a.html,b.html} (one directory per virtual host: 3 pages
each), OUT/seeds.txt (the home pages of 10 ordinary hosts), OUT/addresses.tsv (host and the
loopback address it sits on: 127.0.37.1 .. 127.0.37.ADDRESSES, drawn at random, so every
address serves about the same number of hosts) and OUT/web.json (counts). Host names are
NAME.test, each its own registrable domain.

Every page links to its host's two other pages and to --links pages of other hosts (a host
drawn at random, one of its pages); each home page also links to the next host of a random
ring through all hosts, so every host is reachable from any seed. Text is real, as in
scripts/focus_web.py: ordinary pages carry 3-6 paragraphs of the shared Debian documentation;
one host in --copy-every (at least 3) copies the shared Wikipedia articles (the label set's
source: 3-6 paragraphs of one article a page, its title in the page's URL and in the anchors
of links to it), so the default focus has something to learn: copying pages link mostly to
other copying hosts, and one ordinary page in 10 has a "further reading" link to a copying
host's article, named by the article's title. Deterministic for a given --seed and --hosts.
Nothing here is copied into the repository; the web is generated from ../shared/data.
"""

import argparse
import html
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from focus_web import WORDS, a, page, read_texts, slug  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--hosts", type=int, required=True)
    ap.add_argument("--addresses", type=int, default=8, help="loopback addresses 127.0.37.1..N (at most 250)")
    ap.add_argument("--data", default=str(Path(__file__).resolve().parent.parent.parent / "shared" / "data"))
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("--copy-every", type=int, default=50, help="one host in this many copies Wikipedia")
    ap.add_argument("--links", type=int, default=3, help="links to other hosts on every page")
    args = ap.parse_args()
    if args.hosts < 20 or not 1 <= args.addresses <= 250:
        raise SystemExit("--hosts must be at least 20, --addresses 1..250")
    rng = random.Random(args.seed)
    data = Path(args.data)
    out = Path(args.out)
    hosts_dir = out / "hosts"
    if hosts_dir.exists():
        raise SystemExit(f"{hosts_dir} exists: remove it first")

    articles, filler = read_texts(data, rng, 200, 1500)

    n = args.hosts
    hosts = ["%s%s%d.test" % (rng.choice(WORDS), rng.choice(WORDS), i) for i in range(n)]
    n_copy = max(3, n // args.copy_every)
    copying = set(rng.sample(range(n), n_copy))
    ordinary = [i for i in range(n) if i not in copying]
    copy_list = sorted(copying)
    addr = ["127.0.37.%d" % (1 + rng.randrange(args.addresses)) for _ in range(n)]
    ring = list(range(n))
    rng.shuffle(ring)
    next_in_ring = {ring[k]: ring[(k + 1) % n] for k in range(n)}
    # A copying host's two article pages: which article each copies (title-named paths).
    copy_pages = {}
    for i in copy_list:
        picked = rng.sample(range(len(articles)), 2)
        copy_pages[i] = [("/wiki/%s.html" % slug(articles[x][0]), x) for x in picked]
    site = {i: "%s Pages" % hosts[i].split(".")[0].rstrip("0123456789").capitalize() for i in range(n)}

    def paths(i):
        if i in copying:
            return ["/"] + [p for p, _ in copy_pages[i]]
        return ["/", "/a.html", "/b.html"]

    def out_link(i, from_copy):
        """A link to another host's page, with its anchor text."""
        if from_copy and rng.random() < 0.67 and len(copy_list) > 1:
            j = rng.choice(copy_list)
        else:
            j = rng.randrange(n)
        if j == i:
            j = (j + 1) % n
        k = rng.randrange(3)
        path = paths(j)[k]
        if j in copying and k:
            text = articles[copy_pages[j][k - 1][1]][0]
        else:
            text = site[j] if path == "/" else "%s, page %s" % (site[j], path[1])
        return a("http://%s%s" % (hosts[j], path), text)

    fi = 0
    files = 0
    bytes_written = 0
    further = 0
    for i in range(n):
        d = hosts_dir / hosts[i]
        d.mkdir(parents=True)
        own = paths(i)
        for k, path in enumerate(own):
            is_copy = i in copying
            if is_copy and k:
                title, paras = articles[copy_pages[i][k - 1][1]]
                take = paras[: rng.randint(3, min(6, len(paras)))]
            else:
                title = site[i] if k == 0 else "%s: note %d" % (site[i], k)
                take = [filler[(fi + j) % len(filler)] for j in range(rng.randint(3, 6))]
                fi += len(take)
            body = "<h1>%s</h1>\n" % html.escape(title) + "".join("<p>%s</p>\n" % html.escape(p) for p in take)
            links = [out_link(i, is_copy) for _ in range(args.links)]
            if k == 0:
                j = next_in_ring[i]
                links.append(a("http://%s/" % hosts[j], site[j]))
            if not is_copy and k == 1 and rng.random() < 0.1:
                j = rng.choice(copy_list)
                p, x = copy_pages[j][rng.randrange(2)]
                body += "<p>Further reading: %s</p>\n" % a("http://%s%s" % (hosts[j], p), articles[x][0])
                further += 1
            nav = " | ".join(a(p, "Home" if p == "/" else "Page %d" % m) for m, p in enumerate(own) if m != k)
            links_html = "<ul>" + "".join("<li>%s</li>" % x for x in links) + "</ul>\n<p>%s</p>" % nav
            text = page(title, body, links_html)
            name = "index.html" if path == "/" else path.lstrip("/")
            fp = d / name
            fp.parent.mkdir(parents=True, exist_ok=True)
            fp.write_text(text, encoding="utf-8")
            files += 1
            bytes_written += len(text.encode("utf-8"))

    with open(out / "addresses.tsv", "w") as f:
        for i in range(n):
            f.write("%s\t%s\n" % (hosts[i], addr[i]))
    seeds = rng.sample(ordinary, min(10, len(ordinary)))
    with open(out / "seeds.txt", "w") as f:
        for i in seeds:
            f.write("http://%s/\n" % hosts[i])
    counts = {
        "hosts": n,
        "pages": files,
        "copying_hosts": n_copy,
        "addresses": len(set(addr)),
        "further_reading_links": further,
        "mean_page_bytes": round(bytes_written / files),
        "seed": args.seed,
    }
    (out / "web.json").write_text(json.dumps(counts, indent=2) + "\n")
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
