#!/usr/bin/env python3
"""How fast could a crawl of the bench web finish with unlimited CPU? (issue 22, round 5)

    scripts/crawl_critical_path_sim.py WORK [DELAY_S] [FETCH_S] [PIPELINE_S]

WORK is the directory of `scripts/bench_crawl_nginx.sh` (its web under WORK/web). The
simulation follows the crawler's rules on the web's link graph: every host's URLs breadth
first (shallowest first, then arrival), robots.txt before a host's first page, one request
per host at a time, DELAY_S (0.020) from the end of one request to a host to the start of the
next, FETCH_S (0.003) per request, and a page's links usable PIPELINE_S (0.010) after its
fetch ends. Nothing else waits: no CPU limit, no scheduler latency. It prints when the last
request ends, pages/s, when hosts were first fetched, and requests per 100 ms.
"""
import collections
import heapq
import os
import re
import sys


def read_links(hosts_dir):
    """(host, path) -> [(host, path)] for every page of the web."""
    links = {}
    for host in os.listdir(hosts_dir):
        top = os.path.join(hosts_dir, host)
        for dirpath, _, files in os.walk(top):
            for name in files:
                path = os.path.join(dirpath, name)
                rel = "/" + os.path.relpath(path, top)
                if rel == "/index.html":
                    rel = "/"
                text = open(path, errors="replace").read()
                out = []
                for href in re.findall(r'href="([^"]+)"', text):
                    if href.startswith("http"):
                        m = re.match(r"https?://([^/]+)(/[^#]*)?", href)
                        out.append((m.group(1), m.group(2) or "/"))
                    elif href.startswith("/"):
                        out.append((host, href.split("#")[0]))
                    else:
                        base = rel.rsplit("/", 1)[0]
                        out.append((host, os.path.normpath(base + "/" + href)))
                links[(host, rel)] = out
    return links


def read_seeds(path):
    seeds = []
    for line in open(path):
        m = re.match(r"https?://([^/]+)(/.*)?", line.strip())
        if m:
            seeds.append((m.group(1), m.group(2) or "/"))
    return seeds


def simulate(links, seeds, delay, fetch, pipeline):
    depth, queues, next_allowed, scheduled = {}, collections.defaultdict(list), {}, set()
    events, seq = [], [0]
    first, per_bucket = {}, collections.Counter()

    def at(t, kind, x):
        seq[0] += 1
        heapq.heappush(events, (t, seq[0], kind, x))

    def discover(url, d, t):
        if url in depth:
            return
        depth[url] = d
        host = url[0]
        if host not in next_allowed:
            next_allowed[host] = t + fetch + delay  # robots.txt fetched at t
        if url not in links:
            return  # not on the web: a 404 costs nothing here
        seq[0] += 1
        heapq.heappush(queues[host], (d, seq[0], url))
        if host not in scheduled:
            scheduled.add(host)
            at(max(t, next_allowed[host]), "go", host)

    for s in seeds:
        discover(s, 0, 0.0)
    done, last = 0, 0.0
    while events:
        t, _, kind, x = heapq.heappop(events)
        if kind == "go":
            if not queues[x]:
                scheduled.discard(x)
                continue
            _, _, url = heapq.heappop(queues[x])
            first.setdefault(x, t)
            per_bucket[int(t / 0.1)] += 1
            next_allowed[x] = t + fetch + delay
            done += 1
            last = max(last, t + fetch)
            at(t + fetch + pipeline, "links", url)
            at(t + fetch + delay, "go", x)
        else:
            for v in links.get(x, []):
                discover(v, depth[x] + 1, t)
    return done, last, first, per_bucket


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    work = sys.argv[1]
    delay, fetch, pipeline = (float(a) for a in (sys.argv[2:] + ["0.020", "0.003", "0.010"][len(sys.argv) - 2 :])[:3])
    links = read_links(os.path.join(work, "web", "hosts"))
    seeds = read_seeds(os.path.join(work, "web", "seeds.txt"))
    done, last, first, per_bucket = simulate(links, seeds, delay, fetch, pipeline)
    print(f"delay {delay} s, fetch {fetch} s, pipeline {pipeline} s: {done} pages, last request ends at {last:.3f} s = {done / last:,.0f} pages/s")
    starts = sorted(first.values())
    quantiles = [round(starts[int(q * (len(starts) - 1))], 3) for q in (0, 0.25, 0.5, 0.75, 0.9, 1)]
    print("first page request per host, quantiles 0/25/50/75/90/100 %:", quantiles)
    print("page requests per 100 ms:", " ".join(f"{k}:{per_bucket[k]}" for k in sorted(per_bucket)))


if __name__ == "__main__":
    main()
