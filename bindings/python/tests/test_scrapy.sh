#!/usr/bin/env bash
# The Scrapy plug-in end to end: build the ditto-detect wheel with maturin, install it and
# Scrapy in a fresh virtualenv, serve ditto's demo web on loopback, crawl it once with
# `ditto crawl` and once with a Scrapy spider using ditto_detect.scrapy.DittoPipeline, and
# check that `ditto report` over the Scrapy-built store flags exactly the expected
# neighborhoods, the same as over ditto's own crawl. Then measure the pipeline's overhead.
#
#   bindings/python/tests/test_scrapy.sh        (DITTO=path/to/ditto, default target/release/ditto)
#
# Exit 77 when no Python >= 3.9 with venv is available (the Rust test reports a skip).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
PKG=$ROOT/bindings/python
DITTO=${DITTO:-$ROOT/target/release/ditto}
WORK=${DITTO_PY_WORK:-$ROOT/target/python-plugin-test}
PYTHON=${PYTHON:-python3}
export CARGO_TARGET_DIR=${DITTO_PY_TARGET:-$ROOT/target/python-plugin}

if ! "$PYTHON" -c 'import sys, venv; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
    echo "SKIP: no Python >= 3.9 with venv ($PYTHON)" >&2
    exit 77
fi
[ -x "$DITTO" ] || { echo "no ditto binary at $DITTO (cargo build --release)" >&2; exit 1; }

say() { echo "== $*" >&2; }
rm -rf "$WORK"
mkdir -p "$WORK"

# 1. maturin in a tool venv (kept between runs), the wheel, a fresh venv with it + Scrapy.
# The tool venv is shared with tests/it/spark_scan.rs, which may run beside this script:
# both take an exclusive lock on $TOOLS.lock while they check or create it.
TOOLS=$CARGO_TARGET_DIR/tools-venv
mkdir -p "$CARGO_TARGET_DIR"
exec 9>"$TOOLS.lock"
flock 9
if ! "$TOOLS/bin/maturin" --version >/dev/null 2>&1; then
    say "installing maturin into $TOOLS"
    "$PYTHON" -m venv --clear "$TOOLS"
    "$TOOLS/bin/pip" install -q "maturin>=1.5,<2"
fi
flock -u 9
say "building the wheel"
"$TOOLS/bin/maturin" build --release --quiet -m "$PKG/Cargo.toml" -o "$WORK/wheels" >&2
WHEEL=$(ls "$WORK"/wheels/ditto_detect-*.whl)
case "$WHEEL" in *abi3*) ;; *) echo "not an abi3 wheel: $WHEEL" >&2; exit 1 ;; esac
say "fresh venv with $(basename "$WHEEL") and scrapy"
"$PYTHON" -m venv "$WORK/venv"
VPY=$WORK/venv/bin/python
"$VPY" -m pip install -q "$WHEEL" "scrapy>=2.6"

# 2. The API on its own (no web); edited copies of shared Wikipedia articles through the API
#    and a Scrapy crawl on loopback (passage evidence, and none with exact chunks only); the
#    recrawl middleware's rule.
"$VPY" "$PKG/tests/test_api.py" "$DITTO"
"$VPY" "$PKG/tests/test_edited.py" "$DITTO" "$ROOT/../shared/data/wikipedia/articles"
"$VPY" "$PKG/tests/test_recrawl_middleware.py"

# 3. The demo web on a free loopback port; it writes the demo label set.
PORT=$("$VPY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$DITTO" demo --serve "127.0.0.1:$PORT" --out "$WORK/demo" >"$WORK/serve.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
    grep -q "demo web on" "$WORK/serve.log" 2>/dev/null && break
    kill -0 $SERVER 2>/dev/null || { cat "$WORK/serve.log" >&2; exit 1; }
    sleep 0.1
done
grep -q "demo web on" "$WORK/serve.log" || { echo "demo web did not start" >&2; exit 1; }
LABELSET=$WORK/demo/wikipedia-demo.dls

# 4. ditto's own crawl.
say "ditto crawl"
"$DITTO" crawl --store "$WORK/crawl.db" --labelset "$LABELSET" --resolve "*.demo.test=127.0.0.1:$PORT" \
    --seed http://wiki.demo.test/ --seed http://blog.demo.test/ --min-delay-ms 20 \
    --user-agent 'ditto-test/0.1 (+https://example.org/bot)' --progress none >"$WORK/crawl.log" 2>&1

# 5. The Scrapy crawl with the pipeline. Hosts reach loopback through a plain HTTP proxy
#    setting (the demo server answers absolute-form requests by their Host).
say "scrapy crawl with DittoPipeline"
cd "$PKG/tests/scrapy_demo"
export http_proxy=http://127.0.0.1:$PORT no_proxy= NO_PROXY= HTTP_PROXY=http://127.0.0.1:$PORT
export DITTO_LABELSET=$LABELSET DITTO_STORE=$WORK/scrapy.db
"$WORK/venv/bin/scrapy" crawl demo -O "$WORK/items.jsonl" >"$WORK/scrapy.log" 2>&1 \
    || { tail -30 "$WORK/scrapy.log" >&2; exit 1; }

# 6. Reports: the same neighborhoods, and exactly the expected ones.
for s in crawl scrapy; do
    "$DITTO" report --store "$WORK/$s.db" --format jsonl >"$WORK/$s.report.jsonl"
    "$DITTO" report --store "$WORK/$s.db" --format table >&2
done
"$VPY" - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
def rows(name):
    keep = ("neighborhood", "badness", "pages", "chunks", "labeled_chunks", "sources")
    rs = [json.loads(l) for l in open(f"{work}/{name}.report.jsonl") if l.strip()]
    return sorted(({k: r[k] for k in keep} for r in rs), key=lambda r: r["neighborhood"])
crawl_rows, scrapy_rows = rows("crawl"), rows("scrapy")
crawl = [r["neighborhood"] for r in crawl_rows]
scrapy = [r["neighborhood"] for r in scrapy_rows]
expected = sorted([
    "http://farm.demo.test/articles/", "http://mirror.demo.test/articles/",
    "http://near.demo.test/articles/", "http://wiki.demo.test/", "http://wiki.demo.test/wiki/",
])
items = [json.loads(l) for l in open(f"{work}/items.jsonl")]
assert items and all("ditto" in i and "body" not in i for i in items), "items lack the ditto field"
print(f"scrapy: {len(items)} page items; flagged {scrapy}", file=sys.stderr)
assert scrapy == expected, f"scrapy store flags {scrapy}, expected {expected}"
assert crawl == expected, f"ditto crawl flags {crawl}, expected {expected}"
# The flagged neighborhoods hold the same pages with the same verdicts: badness, counts and
# sources equal (the thresholds differ: Scrapy's depth limit fetches other trap pages).
assert scrapy_rows == crawl_rows, f"scrapy {scrapy_rows} != crawl {crawl_rows}"
PY
say "PASS: ditto report over the Scrapy store flags the same neighborhoods as over ditto crawl"

# 7. A recrawl with DittoRecrawlMiddleware: the Scrapy store of step 5 is the earlier crawl;
#    a spider refetches its URLs (no link following) and the middleware must drop exactly
#    the URLs `ditto recrawl` skips over the same store and web (nothing changed in between).
say "ditto recrawl over the Scrapy store (the expected skips)"
cd "$ROOT"
unset http_proxy HTTP_PROXY
"$DITTO" recrawl --store "$WORK/scrapy.db" --new-store "$WORK/recrawl.db" --labelset "$LABELSET" \
    --warc-dir "$WORK/recrawl-warcs" --skipped-out "$WORK/expected-skips.tsv" \
    --resolve "*.demo.test=127.0.0.1:$PORT" --min-delay-ms 20 \
    --user-agent 'ditto-test/0.1 (+https://example.org/bot)' --progress none >"$WORK/recrawl.log" 2>&1 \
    || { tail -30 "$WORK/recrawl.log" >&2; exit 1; }
grep "fetches saved" "$WORK/recrawl.log" >&2
say "scrapy recrawl with DittoRecrawlMiddleware"
cd "$PKG/tests/scrapy_demo"
export http_proxy=http://127.0.0.1:$PORT HTTP_PROXY=http://127.0.0.1:$PORT
DITTO_STORE=$WORK/scrapy-recrawl.db DITTO_RECRAWL_STORE=$WORK/scrapy.db \
    DITTO_RECRAWL_SKIPPED_OUT=$WORK/scrapy-skips.tsv RECRAWL_URLS=$WORK/items.jsonl \
    "$WORK/venv/bin/scrapy" crawl recrawl -O "$WORK/recrawl-items.jsonl" >"$WORK/scrapy-recrawl.log" 2>&1 \
    || { tail -30 "$WORK/scrapy-recrawl.log" >&2; exit 1; }
"$VPY" - "$WORK" <<'PY'
import json, re, sys
work = sys.argv[1]
def tsv(name):
    return sorted(tuple(l.rstrip("\n").split("\t")) for l in open(f"{work}/{name}") if l.strip())
expected, got = tsv("expected-skips.tsv"), tsv("scrapy-skips.tsv")
log = open(f"{work}/scrapy-recrawl.log").read()
def stat(k):
    m = re.search(r"'ditto_recrawl/%s': (\d+)" % k, log)
    return int(m.group(1)) if m else 0
old = {json.loads(l)["url"] for l in open(f"{work}/items.jsonl") if l.strip()}
fetched = {json.loads(l)["url"] for l in open(f"{work}/recrawl-items.jsonl") if l.strip()}
print(f"scrapy recrawl: {len(old)} URLs, {len(fetched)} fetched, dropped {stat('dropped')}, "
      f"skipped {stat('skipped')}, refetched {stat('refetched')}; ditto recrawl skipped {len(expected)}",
      file=sys.stderr)
assert expected, "ditto recrawl skipped nothing on the demo web"
assert got == expected, f"middleware skipped {got}, ditto recrawl {expected}"
assert stat("dropped") == stat("skipped") == len(expected) and stat("refetched") == 0, log[-3000:]
skipped = {u for u, _ in got}
assert fetched == old - skipped, f"fetched {sorted(fetched ^ (old - skipped))} differently"
PY
say "PASS: DittoRecrawlMiddleware skipped exactly the URLs ditto recrawl skips"

# 8. Optional: overhead figures for BENCHMARKS.md (DITTO_PY_BENCH=1).
if [ "${DITTO_PY_BENCH:-0}" = 1 ]; then
    say "benchmark: per-page detect time"
    "$VPY" "$PKG/tests/bench_detect.py" "$LABELSET" "$WORK/items.jsonl" | tee "$WORK/bench_detect.json"
    say "benchmark: Scrapy pages/s without and with the pipeline (the crawl's pages x 20, no delay, 8 per host)"
    for rep in 1 2 3; do
        for pipe in 0 1; do
            rm -rf "$WORK/bench.db"
            DITTO_PIPELINE=$pipe DITTO_STORE=$WORK/bench.db DOWNLOAD_DELAY=0 BENCH_URLS=$WORK/items.jsonl \
                BENCH_REPEAT=20 "$WORK/venv/bin/scrapy" crawl bench -s CONCURRENT_REQUESTS_PER_DOMAIN=8 \
                -s ROBOTSTXT_OBEY=False -O "$WORK/bench-$pipe.jsonl" >"$WORK/bench.log" 2>&1
            "$VPY" - "$WORK/bench.log" "$pipe" "$rep" <<'PY' | tee -a "$WORK/bench_scrapy.txt"
import re, sys
log = open(sys.argv[1]).read()
n = int(re.search(r"'item_scraped_count': (\d+)", log).group(1))
dt = float(re.search(r"'elapsed_time_seconds': ([0-9.]+)", log).group(1))
print(f"pipeline={sys.argv[2]} rep={sys.argv[3]} pages={n} elapsed={dt:.2f}s pages/s={n / dt:.1f}")
PY
        done
    done
fi
