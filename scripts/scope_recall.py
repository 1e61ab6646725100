#!/usr/bin/env python3
"""Copying hosts found by a focused crawl whose copiers sit on other registrable domains than
its seeds (issue 25, item 2): the default scope against `--scope domain`, at one page budget.

    python3 scripts/scope_recall.py --work /tmp/scopework [--ditto target/release/ditto]
        [--budget 1000] [--min-delay-ms 20] [--portals 4 --ordinary 120 --copying 10 --decoys 10]

Builds the focused-crawl test web (scripts/focus_web.py) with `--suffix test`, so every host
is a registrable domain of its own (`portal1.test`, `amberbirch12.test`, ...), serves it with
nginx on loopback (as scripts/focus_harvest.py does), and crawls it from the portals twice
with the same flags but the scope: `ditto crawl` without `--scope` (the default) and with
`--scope domain`. A copying host is found when a fetched page of it carries labeled chunks
(ditto's own scan of the web's files is the truth, read against nginx's access log). Prints
a Markdown table and politeness from nginx's log; writes WORK/scope-recall.json.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import focus_harvest as fh  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--ditto", type=Path, default=ROOT / "target" / "release" / "ditto")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--port", type=int, default=18728)
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--min-delay-ms", type=int, default=20)
    ap.add_argument("--portals", type=int, default=4)
    ap.add_argument("--ordinary", type=int, default=120)
    ap.add_argument("--copying", type=int, default=10)
    ap.add_argument("--decoys", type=int, default=10)
    args = ap.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    web = work / "web"
    if not (web / "hosts").exists():
        fh.run([sys.executable, ROOT / "scripts" / "focus_web.py", "--out", web, "--data", args.data,
                "--suffix", "test", "--portals", args.portals, "--ordinary", args.ordinary,
                "--copying", args.copying, "--decoys", args.decoys], stdout=subprocess.DEVNULL)
    dls = work / "wikipedia.dls"
    if not dls.exists():
        fh.run([args.ditto, "labelset", "build", "--name", "wikipedia", "--min-chars", "100", "-o", dls,
                args.data / "wikipedia" / "articles"], stdout=subprocess.DEVNULL)
    truth = fh.truth(args.ditto, work, web, dls)
    kinds = dict(l.split("\t")[:2] for l in (web / "hosts.tsv").read_text().splitlines())
    copying = {h for h, k in kinds.items() if k == "copy"}
    web_pages = sum(1 for _ in (web / "hosts").rglob("*.html"))

    rows = []
    for name, extra in (("default", []), ("--scope domain", ["--scope", "domain"])):
        tag = "default" if not extra else "domain"
        log = work / f"access-{tag}.log"
        if log.exists():
            log.unlink()
        db = work / f"{tag}.db"
        subprocess.run(["rm", "-rf", str(db)], check=True)
        pid = fh.start_nginx(work, web, args.port, log)
        try:
            t0 = time.time()
            out = subprocess.run(
                [str(c) for c in [args.ditto, "crawl", "--store", db, "--labelset", dls, "--seeds",
                                  web / "seeds.txt", "--resolve", f"*.test=127.0.0.1:{args.port}",
                                  "--user-agent", fh.UA, "--min-delay-ms", args.min_delay_ms,
                                  # one loopback server stands in for every host's (issue 37)
                                  "--per-ip-in-flight", "0", "--per-ip-min-delay-ms", "0",
                                  "--max-pages", args.budget, "--progress", "none", "--threads", "2",
                                  "--stats-json", work / f"{tag}.json"] + extra],
                check=True, capture_output=True, text=True)
            secs = round(time.time() - t0, 1)
        finally:
            fh.stop_nginx(work, pid)
        first_line = next((l for l in out.stderr.splitlines() if l.startswith("scope ")), "")
        entries = fh.read_log(log)
        _, hosts_seq = fh.curve(entries, truth)
        found = {h for h, n in hosts_seq if n > 0 and h in copying}
        pages = sum(1 for e in entries if e[2] != "/robots.txt")
        pol = fh.politeness(entries, args.min_delay_ms)
        rows.append({"crawl": name, "scope_line": first_line, "page_requests": pages,
                     "hosts_requested": pol["hosts"], "copying_found": len(found), "copying": len(copying),
                     "recall": round(len(found) / max(1, len(copying)), 2), "seconds": secs,
                     "gaps_below_min_delay": pol["gaps_below_min_delay"], "two_in_flight": pol["two_in_flight"]})

    print(f"web: {web_pages} pages on {len(kinds)} hosts, each its own registrable domain; "
          f"{len(copying)} copying hosts; budget {args.budget} pages, --min-delay-ms {args.min_delay_ms}")
    print("| crawl | page requests | hosts requested | copying hosts found | host recall | "
          "gaps below the delay | two in flight | seconds |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| `{r['crawl']}` | {r['page_requests']} | {r['hosts_requested']} | "
              f"{r['copying_found']} of {r['copying']} | {r['recall']:.2f} | {r['gaps_below_min_delay']} | "
              f"{r['two_in_flight']} | {r['seconds']} |")
    for r in rows:
        print(f"{r['crawl']}: {r['scope_line']}")
    (work / "scope-recall.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
