#!/usr/bin/env python3
"""Harvest curves of `ditto crawl --focus labeled` and `--focus bfs` over the focused-crawl
test web (scripts/focus_web.py) served by nginx (Debian package `nginx` or `nginx-light`)
on loopback, and the politeness of each crawl from nginx's own access log.

    python3 scripts/focus_web.py --out /tmp/focusweb
    python3 scripts/focus_harvest.py --web /tmp/focusweb --work /tmp/focuswork \\
        [--ditto target/release/ditto] [--min-delay-ms 100] [--svg docs/focus-harvest.svg]
        [--run NAME FOCUS FLAGS ...]   # e.g. --run nosm labeled "--sitemaps off"
        [--binary NAME PATH ...]       # run NAME with another build (builds alternate in one run)
        [--truth-match passage|exact]  # what the truth counts (`ditto scan --match`)

Steps: build the label set from ../shared/data/wikipedia/articles; scan the whole web's
files once (`ditto scan --url-prefix http://`) for every page's labeled chunks (ditto's own
detector; the "truth" each crawl order is scored against); for each focus, start nginx
with a fresh access log (`$msec $host $request_uri $status $request_time`), crawl the web to
the end (`--scope any`, seeds = the portals), stop nginx. The order of page fetches is
nginx's (robots.txt left out), so the curve does not rest on ditto's own account of its
crawl. Prints a Markdown table, writes the SVG plot, and a JSON summary to WORK/summary.json.
Sitemap requests (`.xml`, `.xml.gz`: a web from `focus_web.py --sitemaps`) are requests, not
pages: left out of the page counts, counted apart (`sitemap_requests`). `--run` (repeatable)
crawls named variants instead of `--focus`: NAME, the focus, and more `ditto crawl` flags.
Besides the pages until half of the copying hosts were found, the pages until half of the
hosts with labeled chunks by the truth were: with passages (issue 36, the default truth) the
decoy hosts' reworded articles are labeled too (48 hosts, not 24).

Politeness, from each access log: per host, requests sorted by `$msec` (the time nginx
logs a request, at its end); a violation is two consecutive requests to one host logged
less than --min-delay-ms apart (1 ms allowed for `$msec` rounding), or a request starting
(`$msec - $request_time`) before the previous one to the same host ended (two in flight).
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UA = "ditto-focus-bench/0.1 (+http://localhost/focus-bench)"


def run(cmd, **kw):
    print("+", " ".join(str(c) for c in cmd), file=sys.stderr, flush=True)
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def nginx_conf(work, web, port, log):
    return f"""
worker_processes 2;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log;
events {{ worker_connections 1024; }}
http {{
    types {{ text/html html; text/plain txt; application/xml xml; application/gzip gz; }}
    default_type text/html;
    log_format focus '$msec $host $request_uri $status $request_time';
    access_log {log} focus;
    client_body_temp_path {work}/tmp-body;
    proxy_temp_path {work}/tmp-proxy;
    fastcgi_temp_path {work}/tmp-fastcgi;
    uwsgi_temp_path {work}/tmp-uwsgi;
    scgi_temp_path {work}/tmp-scgi;
    server {{
        listen 127.0.0.1:{port};
        server_name ~^(?<vh>[a-z0-9.-]+)$;
        root {web}/hosts/$vh;
        index index.html;
    }}
}}
"""


def start_nginx(work, web, port, log):
    conf = work / "nginx.conf"
    conf.write_text(nginx_conf(work, web, port, log))
    run(["nginx", "-c", conf, "-p", work])
    for _ in range(100):
        if (work / "nginx.pid").exists():
            return int((work / "nginx.pid").read_text().strip())
        time.sleep(0.05)
    raise SystemExit("nginx did not start (see nginx-error.log)")


def stop_nginx(work, pid):
    os.kill(pid, signal.SIGQUIT)
    for _ in range(200):
        if not (work / "nginx.pid").exists():
            return
        time.sleep(0.05)


def truth(ditto, work, web, dls, match="passage"):
    """Labeled chunks of every page of the web, by URL as a crawler fetches it, as `ditto scan
    --match MATCH` finds them (passage: the default since issue 36; exact: whole paragraphs)."""
    db = work / ("truth.db" if match == "passage" else f"truth-{match}.db")
    if not db.exists():
        run([ditto, "scan", "--store", db, "--labelset", dls, "--url-prefix", "http://", "--progress", "none",
             "--match", match, web / "hosts"])
    out = subprocess.run([str(ditto), "report", "--store", str(db), "--level", "page", "--threshold", "0",
                          "--format", "jsonl"], check=True, capture_output=True, text=True).stdout
    t = {}
    for line in out.splitlines():
        r = json.loads(line)
        u = r["neighborhood"]
        if u.endswith("/index.html"):
            u = u[: -len("index.html")]
        t[u] = r["labeled_chunks"]
    return t


def read_log(path):
    rows = []
    for line in open(path):
        parts = line.split()
        if len(parts) != 5:
            continue
        msec, host, uri, status, rt = parts
        rows.append((float(msec), host, uri, int(status), float(rt)))
    rows.sort()
    return rows


def politeness(rows, min_delay_ms):
    by_host = {}
    for r in rows:
        by_host.setdefault(r[1], []).append(r)
    gaps_below, overlaps, min_gap = 0, 0, float("inf")
    for reqs in by_host.values():
        for a, b in zip(reqs, reqs[1:]):
            gap = (b[0] - a[0]) * 1000
            min_gap = min(min_gap, gap)
            if gap < min_delay_ms - 1:
                gaps_below += 1
            if b[0] - b[4] < a[0] - 0.001:
                overlaps += 1
    return {"hosts": len(by_host), "requests": len(rows), "gaps_below_min_delay": gaps_below,
            "two_in_flight": overlaps, "min_gap_ms": round(min_gap, 1)}


def is_sitemap(uri):
    return uri.endswith(".xml") or uri.endswith(".xml.gz")


def curve(rows, t):
    """Cumulative labeled chunks after each page fetch, and the hosts of the fetched pages."""
    cum, total, hosts = [], 0, []
    for _, host, uri, status, _ in rows:
        if uri == "/robots.txt" or is_sitemap(uri) or not (200 <= status < 300):
            continue
        u = "http://%s%s" % (host, uri)
        total += t.get(u, 0)
        cum.append(total)
        hosts.append((host, t.get(u, 0)))
    return cum, hosts


def pages_until_half(hosts_seq, copying):
    """Pages fetched until a page with labeled chunks came from half of the hosts `copying`."""
    need = (len(copying) + 1) // 2
    found = set()
    for i, (h, n) in enumerate(hosts_seq, 1):
        if n > 0 and h in copying:
            found.add(h)
            if len(found) >= need:
                return i
    return None


def at(cum, n):
    if not cum:
        return 0
    return cum[min(n, len(cum)) - 1] if n > 0 else 0


def svg(curves, web_pages, avg, path):
    w, h, ml, mb, mt, mr = 720, 440, 70, 50, 30, 20
    xmax = max(len(c) for _, c, _ in curves)
    ymax = max(c[-1] for _, c, _ in curves if c) * 1.05
    X = lambda x: ml + (w - ml - mr) * x / xmax
    Y = lambda y: h - mb - (h - mb - mt) * y / ymax
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<text x="{w/2}" y="18" text-anchor="middle" font-size="14">Labeled chunks found against pages fetched ({web_pages:,} pages, nginx on loopback)</text>']
    for i in range(6):
        yv = ymax / 1.05 * i / 5
        parts.append(f'<line x1="{ml}" x2="{w-mr}" y1="{Y(yv):.1f}" y2="{Y(yv):.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{ml-6}" y="{Y(yv)+4:.1f}" text-anchor="end">{int(yv):,}</text>')
    for i in range(6):
        xv = xmax * i / 5
        parts.append(f'<line x1="{X(xv):.1f}" x2="{X(xv):.1f}" y1="{mt}" y2="{h-mb}" stroke="#eee"/>')
        parts.append(f'<text x="{X(xv):.1f}" y="{h-mb+16}" text-anchor="middle">{int(xv):,}</text>')
    tenth = web_pages / 10
    parts.append(f'<line x1="{X(tenth):.1f}" x2="{X(tenth):.1f}" y1="{mt}" y2="{h-mb}" stroke="#999" stroke-dasharray="4,3"/>')
    parts.append(f'<text x="{X(tenth)+4:.1f}" y="{mt+12}" fill="#666">10 % of the web</text>')
    parts.append(f'<text x="{(ml+w-mr)/2}" y="{h-12}" text-anchor="middle">pages fetched</text>')
    parts.append(f'<text x="16" y="{(mt+h-mb)/2}" text-anchor="middle" transform="rotate(-90 16 {(mt+h-mb)/2})">labeled chunks found</text>')
    # Random order: the web's average yield per page.
    parts.append(f'<line x1="{X(0)}" y1="{Y(0)}" x2="{X(xmax):.1f}" y2="{Y(avg*xmax):.1f}" stroke="#aaa" stroke-width="1.5" stroke-dasharray="2,3"/>')
    lx = ml + 0.4 * (w - ml - mr)  # the legend, clear of both curves' usual paths
    for k, (label, c, color) in enumerate(curves):
        step = max(1, len(c) // 600)
        pts = " ".join(f"{X(i+1):.1f},{Y(v):.1f}" for i, v in enumerate(c) if i % step == 0 or i == len(c) - 1)
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{pts}"/>')
        parts.append(f'<line x1="{lx}" x2="{lx+25}" y1="{mt+20+18*k}" y2="{mt+20+18*k}" stroke="{color}" stroke-width="2"/>')
        parts.append(f'<text x="{lx+30}" y="{mt+24+18*k}">{label}</text>')
    k = len(curves)
    parts.append(f'<line x1="{lx}" x2="{lx+25}" y1="{mt+20+18*k}" y2="{mt+20+18*k}" stroke="#aaa" stroke-dasharray="2,3"/>')
    parts.append(f'<text x="{lx+30}" y="{mt+24+18*k}">random order (the web\'s average per page)</text>')
    parts.append("</svg>")
    Path(path).write_text("\n".join(parts) + "\n")


def crawl_help(binary, _cache={}):
    """`BINARY crawl --help`, to pass only the flags a build knows (builds compared)."""
    if binary not in _cache:
        _cache[binary] = subprocess.run([str(binary), "crawl", "--help"], capture_output=True, text=True).stdout
    return _cache[binary]


def binary_for(args, name):
    """The binary of the run `name` (`--binary NAME PATH`), else `--ditto`."""
    return dict((n, Path(p)) for n, p in (args.binary or [])).get(name, args.ditto)


def crawl(args, work, web, dls, name, focus, flags, log, limit_s=None):
    """One crawl of the web behind a fresh nginx; returns its wall time in seconds. With
    `limit_s`, the crawl is interrupted (SIGINT, as Ctrl-C) after that many seconds."""
    if log.exists():
        log.unlink()
    db = work / f"{name}.db"
    if db.exists():
        subprocess.run(["rm", "-rf", str(db)], check=True)
    pid = start_nginx(work, web, args.port, log)
    try:
        t0 = time.time()
        cmd = [binary_for(args, name), "crawl", "--store", db, "--labelset", dls, "--seeds", web / "seeds.txt",
               "--scope", "any", "--resolve", f"*.focus.test=127.0.0.1:{args.port}", "--user-agent", UA,
               "--min-delay-ms", args.min_delay_ms, "--focus", focus, "--progress", "none",
               "--threads", args.threads, "--stats-json", work / f"{name}.json"]
        # One nginx on one loopback address stands in for every host's server: no per-address
        # bound (issue 37; scripts/bench_per_ip_nginx.sh measures it). Builds from before it
        # have none to turn off.
        if "--per-ip-in-flight" in crawl_help(cmd[0]):
            cmd += ["--per-ip-in-flight", "0", "--per-ip-min-delay-ms", "0"]
        cmd += flags.split()
        if limit_s is None:
            run(cmd)
        else:
            print("+", " ".join(str(c) for c in cmd), f"(stopped after {limit_s} s)", file=sys.stderr, flush=True)
            p = subprocess.Popen([str(c) for c in cmd])
            try:
                p.wait(timeout=limit_s)
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGINT)
                p.wait(timeout=180)
        return round(time.time() - t0, 1)
    finally:
        stop_nginx(work, pid)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--web", required=True, type=Path)
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--ditto", type=Path, default=ROOT / "target" / "release" / "ditto")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--port", type=int, default=18727)
    ap.add_argument("--min-delay-ms", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--focus", default="labeled,bfs")
    ap.add_argument("--extra", default="", help="more `ditto crawl` flags for the labeled crawl")
    ap.add_argument("--run", nargs=3, action="append", metavar=("NAME", "FOCUS", "FLAGS"),
                    help="a named crawl: its focus and more `ditto crawl` flags (repeatable; replaces --focus)")
    ap.add_argument("--binary", nargs=2, action="append", metavar=("NAME", "PATH"),
                    help="the ditto binary of run NAME (repeatable; others: --ditto), to compare builds in one run")
    ap.add_argument("--truth-match", default="passage", choices=["passage", "exact"],
                    help="what the truth counts: `ditto scan --match` (passage: edited copies too)")
    ap.add_argument("--svg", type=Path)
    ap.add_argument("--analyze-only", action="store_true",
                    help="no crawls: read the access logs and stats of an earlier run in --work")
    args = ap.parse_args()
    web, work = args.web.resolve(), args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    for d in ("tmp-body", "tmp-proxy", "tmp-fastcgi", "tmp-uwsgi", "tmp-scgi"):
        (work / d).mkdir(exist_ok=True)
    dls = work / "wikipedia.dls"
    if not dls.exists():
        run([args.ditto, "labelset", "build", "--name", "wikipedia", "--min-chars", "100", "-o", dls,
             args.data / "wikipedia" / "articles"], capture_output=True)
    t = truth(args.ditto, work, web, dls, args.truth_match)
    kinds = {}
    for line in open(web / "hosts.tsv"):
        host, kind, n = line.split("\t")
        kinds[host] = kind
    copying = {h for h, k in kinds.items() if k == "copy"}
    # Hosts with labeled chunks by the truth: with passages (issue 36) the decoys' reworded
    # articles are edited copies, labeled too.
    labeled_hosts = {u.split("/")[2] for u, n in t.items() if n > 0}
    web_pages = sum(int(l.split("\t")[2]) for l in open(web / "hosts.tsv"))
    web_chunks = sum(t.values())
    avg = web_chunks / web_pages
    results = {}
    runs = args.run or [(f, f, args.extra if f == "labeled" else "") for f in args.focus.split(",")]
    for name, focus, flags in runs:
        log = work / f"access-{name}.log"
        secs = None
        if not args.analyze_only:
            secs = crawl(args, work, web, dls, name, focus, flags, log)
        rows = read_log(log)
        cum, hosts_seq = curve(rows, t)
        stats = json.loads((work / f"{name}.json").read_text())
        results[name] = {
            "focus": focus,
            "flags": flags,
            "sitemap_requests": sum(1 for r in rows if is_sitemap(r[2])),
            "cum": cum,
            "seconds": secs if secs is not None else round(stats["crawl"]["seconds"], 1),
            "half_copying_hosts_at": pages_until_half(hosts_seq, copying),
            "half_labeled_hosts_at": pages_until_half(hosts_seq, labeled_hosts),
            "politeness": politeness(rows, args.min_delay_ms),
            "store_pages": stats["crawl"]["pages"],
        }
    budgets = sorted({max(1, round(web_pages * f)) for f in (0.01, 0.02, 0.05, 0.1, 0.125, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0)})
    order = list(results)
    print(f"\nweb: {len(kinds)} hosts ({len(copying)} copying; {len(labeled_hosts)} with labeled chunks, "
          f"truth --match {args.truth_match}), {web_pages} pages, {web_chunks} labeled chunks ({avg:.2f} per page)\n")
    print("| pages fetched | " + " | ".join(f"`{f}`: labeled chunks" for f in order) +
          (" | labeled / bfs" if {"labeled", "bfs"} <= set(order) else "") + " |")
    print("| ---: | " + " | ".join("---:" for _ in order) + (" | ---:" if {"labeled", "bfs"} <= set(order) else "") + " |")
    table = []
    for b in budgets:
        vals = [at(results[f]["cum"], b) for f in order]
        ratio = ""
        if {"labeled", "bfs"} <= set(order):
            lb, bb = at(results["labeled"]["cum"], b), at(results["bfs"]["cum"], b)
            ratio = " | " + (f"{lb / bb:.1f}x" if bb else ("-" if lb == 0 else "inf (bfs 0)"))
        print(f"| {b:,} ({100 * b / web_pages:.0f} %) | " + " | ".join(f"{v:,}" for v in vals) + ratio + " |")
        table.append([b] + vals)
    summary = {"web": {"hosts": len(kinds), "copying_hosts": len(copying), "labeled_hosts": len(labeled_hosts),
                       "truth_match": args.truth_match, "pages": web_pages, "labeled_chunks": web_chunks},
               "budgets": table}
    if {"labeled", "bfs"} <= set(order):
        L, B = results["labeled"]["cum"], results["bfs"]["cum"]
        n = max(len(L), len(B))
        below = [i + 1 for i in range(n) if at(L, i + 1) < at(B, i + 1)]
        summary["budgets_where_labeled_below_bfs"] = len(below)
        summary["first_budget_labeled_below_bfs"] = below[0] if below else None
        print(f"\nbudgets (1..{n} pages) where labeled found fewer than bfs: {len(below)}"
              + (f" (first at {below[0]})" if below else ""))
    for f in order:
        r = results[f]
        print(f"{f} (--focus {r['focus']} {r['flags']}): {len(r['cum'])} pages fetched "
              f"(+ {r['sitemap_requests']} sitemap requests) in {r['seconds']} s; half of the copying hosts found after "
              f"{r['half_copying_hosts_at']} pages (of the hosts with labeled chunks: {r['half_labeled_hosts_at']}); "
              f"politeness from nginx's log: {r['politeness']}")
        summary[f] = {k: v for k, v in r.items() if k != "cum"}
    (work / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    if args.svg:
        colors = {"labeled": "#c0392b", "bfs": "#2c7fb8"}
        palette = ["#c0392b", "#2c7fb8", "#e67e22", "#27ae60", "#8e44ad", "#333"]
        svg([(f"--focus {f}" if f in colors else f"{f}: --focus {results[f]['focus']} {results[f]['flags']}",
              results[f]["cum"], colors.get(f, palette[(k + 2) % len(palette)])) for k, f in enumerate(order)],
            web_pages, avg, args.svg)
        print(f"plot: {args.svg}")


if __name__ == "__main__":
    main()
