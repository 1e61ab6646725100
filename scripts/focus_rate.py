#!/usr/bin/env python3
"""Labeled chunks per second and pages per second over time (issue 37 item 2): `ditto crawl
--focus labeled` against `--focus bfs` on the focused-crawl test web (scripts/focus_web.py)
served by nginx on loopback, at several per-host delays; a CSV time series and an SVG plot
(written here, no plotting library).

    python3 scripts/focus_web.py --out /tmp/focusweb
    python3 scripts/focus_rate.py --web /tmp/focusweb --work /tmp/focusrate \\
        [--ditto target/release/ditto] [--delays 20,1000] [--limit-s 120,90] [--bucket-s 0.25,2] [--plot-s 5,60]
        [--run NAME FOCUS FLAGS ...] [--binary NAME PATH ...]
        [--csv docs/benchmarks/issue-37-rate.csv] [--svg docs/benchmarks/issue-37-rate.svg]

Each crawl is `scripts/focus_harvest.py`'s (same nginx, flags and truth: every page's labeled
chunks from `ditto scan` of the web's files); a crawl still running after its delay's
`--limit-s` is interrupted (SIGINT, as Ctrl-C). Times and page order are nginx's access log
(`$msec`, the end of each request), t = 0 at the crawl's first request. Pages: 2xx answers
other than robots.txt and sitemaps. `--run` (repeatable, default `labeled labeled ""` and
`bfs bfs ""`) names the crawls; `--binary NAME PATH` gives a run its own build, so two builds
alternate in one session.

Prints, per delay and run: pages, seconds, pages per second, labeled chunks, and against the
run named `bfs`: the buckets where the run's cumulative labeled chunks were below bfs's, and
the buckets (while both crawled) where its labeled chunks per second were.
"""

import argparse
import csv
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import focus_harvest as fh  # noqa: E402


def series(rows, t, bucket_s):
    """Per bucket of `bucket_s` seconds from the first request: pages and labeled chunks."""
    if not rows:
        return []
    t0 = min(r[0] - r[4] for r in rows)
    end = max(r[0] for r in rows)
    n = max(1, math.ceil((end - t0) / bucket_s + 1e-9))
    pages, labeled = [0] * n, [0] * n
    for msec, host, uri, status, _ in rows:
        if uri == "/robots.txt" or fh.is_sitemap(uri) or not (200 <= status < 300):
            continue
        b = min(n - 1, int((msec - t0) / bucket_s))
        pages[b] += 1
        labeled[b] += t.get("http://%s%s" % (host, uri), 0)
    out, cp, cl = [], 0, 0
    for i in range(n):
        cp += pages[i]
        cl += labeled[i]
        out.append({"t_end_s": round((i + 1) * bucket_s, 3), "pages": pages[i], "labeled_chunks": labeled[i],
                    "pages_per_s": round(pages[i] / bucket_s, 1), "labeled_per_s": round(labeled[i] / bucket_s, 1),
                    "cum_pages": cp, "cum_labeled": cl})
    return out


def compare(s, bfs):
    """Buckets where `s` had fewer labeled chunks in all than bfs, and (while both crawled)
    fewer labeled chunks per second."""
    n = max(len(s), len(bfs))
    cum = lambda x, i: x[min(i, len(x) - 1)]["cum_labeled"] if x else 0
    below_cum = [i for i in range(n) if cum(s, i) < cum(bfs, i)]
    both = min(len(s), len(bfs))
    below_rate = [i for i in range(both) if s[i]["labeled_chunks"] < bfs[i]["labeled_chunks"]]
    return below_cum, below_rate


PALETTE = ["#c0392b", "#2c7fb8", "#e67e22", "#27ae60", "#8e44ad", "#333333"]


def svg(panels, path, title):
    """panels: rows of (row label, x range in seconds or None, [(series name, color, points per
    bucket, bucket seconds)]) drawn as three panels each: cumulative labeled chunks, labeled
    chunks per second, pages per second."""
    cols = [("labeled chunks found", "cum_labeled"), ("labeled chunks per second", "labeled_per_s"),
            ("pages per second", "pages_per_s")]
    pw, ph, ml, mb, mt, gap = 330, 220, 60, 36, 46, 18
    w = ml + len(cols) * (pw + gap) + 10
    h = mt + len(panels) * (ph + mb + gap) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2}" y="18" text-anchor="middle" font-size="14">{title}</text>']
    for r, (label, xrange, lines) in enumerate(panels):
        y0 = mt + r * (ph + mb + gap)
        xmax = max((len(pts) for _, _, pts, _ in lines), default=1) * lines[0][3] if lines else 1
        xmax = min(xmax, xrange or xmax)
        for c, (ctitle, key) in enumerate(cols):
            x0 = ml + c * (pw + gap)
            ymax = max([p[key] for _, _, pts, _ in lines for p in pts] + [1]) * 1.05
            X = lambda x: x0 + pw * x / xmax
            Y = lambda y: y0 + ph - ph * y / ymax
            out.append(f'<rect x="{x0}" y="{y0}" width="{pw}" height="{ph}" fill="none" stroke="#ccc"/>')
            out.append(f'<text x="{x0 + pw / 2}" y="{y0 - 6}" text-anchor="middle">{label}: {ctitle}</text>')
            for i in range(5):
                yv = ymax / 1.05 * i / 4
                out.append(f'<line x1="{x0}" x2="{x0 + pw}" y1="{Y(yv):.1f}" y2="{Y(yv):.1f}" stroke="#eee"/>')
                out.append(f'<text x="{x0 - 4}" y="{Y(yv) + 4:.1f}" text-anchor="end">{yv:,.0f}</text>')
                xv = xmax * i / 4
                out.append(f'<text x="{X(xv):.1f}" y="{y0 + ph + 14}" text-anchor="middle">{xv:,.0f}</text>')
            out.append(f'<text x="{x0 + pw / 2}" y="{y0 + ph + 28}" text-anchor="middle">seconds</text>')
            for name, color, pts, bucket in lines:
                xy = [(0.0, 0.0)] if key == "cum_labeled" else []
                for p in pts:
                    xs = p["t_end_s"] if key == "cum_labeled" else p["t_end_s"] - bucket / 2
                    if xs <= xmax:
                        xy.append((xs, p[key]))
                poly = " ".join(f"{X(x):.1f},{Y(y):.1f}" for x, y in xy)
                out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.6" points="{poly}"/>')
        for k, (name, color, _, _) in enumerate(lines):
            lx, ly = ml + 8 + 180 * k, y0 + 14
            out.append(f'<line x1="{lx}" x2="{lx + 20}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="2"/>')
            out.append(f'<text x="{lx + 24}" y="{ly + 4}">{name}</text>')
    out.append("</svg>")
    Path(path).write_text("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--web", required=True, type=Path)
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--ditto", type=Path, default=fh.ROOT / "target" / "release" / "ditto")
    ap.add_argument("--data", type=Path, default=fh.ROOT.parent / "shared" / "data")
    ap.add_argument("--port", type=int, default=18727)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--delays", default="20,1000", help="per-host delays in ms (--min-delay-ms), comma-separated")
    ap.add_argument("--limit-s", default="120,90",
                    help="per delay, the longest a crawl runs before it is interrupted (comma-separated)")
    ap.add_argument("--bucket-s", default="0.25,2", help="per delay, the time series' step in seconds")
    ap.add_argument("--run", nargs=3, action="append", metavar=("NAME", "FOCUS", "FLAGS"))
    ap.add_argument("--binary", nargs=2, action="append", metavar=("NAME", "PATH"))
    ap.add_argument("--plot-s", default="", help="per delay, the plot's time range in seconds (default: all)")
    ap.add_argument("--csv", type=Path)
    ap.add_argument("--svg", type=Path)
    ap.add_argument("--analyze-only", action="store_true", help="no crawls: read the logs of an earlier run")
    args = ap.parse_args()
    web, work = args.web.resolve(), args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    for d in ("tmp-body", "tmp-proxy", "tmp-fastcgi", "tmp-uwsgi", "tmp-scgi"):
        (work / d).mkdir(exist_ok=True)
    dls = work / "wikipedia.dls"
    if not dls.exists():
        fh.run([args.ditto, "labelset", "build", "--name", "wikipedia", "--min-chars", "100", "-o", dls,
                args.data / "wikipedia" / "articles"], capture_output=True)
    t = fh.truth(args.ditto, work, web, dls)
    runs = args.run or [("labeled", "labeled", ""), ("bfs", "bfs", "")]
    delays = [int(d) for d in args.delays.split(",")]
    limits = [float(x) for x in args.limit_s.split(",")]
    limits += [limits[-1]] * (len(delays) - len(limits))
    buckets = [float(x) for x in args.bucket_s.split(",")]
    buckets += [buckets[-1]] * (len(delays) - len(buckets))
    ranges = [float(x) for x in args.plot_s.split(",") if x] + [None] * len(delays)
    rows_out, panels = [], []
    for delay, limit, bucket_s, xrange in zip(delays, limits, buckets, ranges):
        args.min_delay_ms = delay
        per_run = {}
        for name, focus, flags in runs:
            tag = f"{name}-{delay}ms"
            log = work / f"access-{tag}.log"
            if not args.analyze_only:
                # The run's own build (--binary NAME PATH) for each of its crawls.
                args.binary = (args.binary or []) + [(tag, str(fh.binary_for(args, name)))]
                fh.crawl(args, work, web, dls, tag, focus, flags, log, limit_s=limit)
            s = series(fh.read_log(log), t, bucket_s)
            per_run[name] = s
            for p in s:
                rows_out.append({"delay_ms": delay, "run": name, **p})
        print(f"\nper-host delay {delay} ms (crawls stopped after {limit:g} s), buckets of {bucket_s:g} s:")
        for name, s in per_run.items():
            pages = s[-1]["cum_pages"] if s else 0
            secs = len(s) * bucket_s
            line = (f"  {name}: {pages} pages, {s[-1]['cum_labeled'] if s else 0} labeled chunks in {secs:g} s "
                    f"({pages / secs if secs else 0:.0f} pages/s)")
            if name != "bfs" and "bfs" in per_run:
                below_cum, below_rate = compare(s, per_run["bfs"])
                line += (f"; below bfs in labeled chunks found: {len(below_cum)} of {max(len(s), len(per_run['bfs']))}"
                         f" buckets{' (first ends at %g s)' % ((below_cum[0] + 1) * bucket_s) if below_cum else ''}"
                         f"; in labeled chunks per second while both crawled: {len(below_rate)} of "
                         f"{min(len(s), len(per_run['bfs']))}")
            print(line)
        panels.append((f"{delay} ms", xrange, [(n, PALETTE[k % len(PALETTE)], s, bucket_s)
                                       for k, (n, s) in enumerate(per_run.items())]))
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(rows_out[0].keys()))
            wr.writeheader()
            wr.writerows(rows_out)
        print(f"time series: {args.csv}")
    if args.svg:
        svg(panels, args.svg, "Focused crawl against bfs over time (535-host web, nginx on loopback)")
        print(f"plot: {args.svg}")


if __name__ == "__main__":
    main()
