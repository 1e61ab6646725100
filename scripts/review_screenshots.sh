#!/usr/bin/env bash
# Screenshots of `ditto review` with headless Chromium over a store built from ../shared/data,
# written to docs/review-*.png: the list (with the badness histogram), a neighborhood, a page
# (its text with the copied blocks highlighted beside their sources) and two near replicas side
# by side.
#   scripts/review_screenshots.sh      (installs Debian's chromium when missing; needs root then)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DATA=$ROOT/../shared/data

if ! command -v chromium >/dev/null; then
  echo "installing chromium (Debian package)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

# DITTO=path/to/ditto uses an existing binary instead of building one.
if [ -z "${DITTO:-}" ]; then
  cargo build --release -q --bin ditto
  DITTO=$ROOT/target/release/ditto
fi
WORK=$(mktemp -d)
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

# Label set: one Debian manual, whose (constructed) mirror the shared data holds; its sources
# link back to the manual's own host.
"$DITTO" labelset build --name debian-faq --min-chars 100 \
  --url-prefix http://debian-faq.en.docs.test/ -o "$WORK/ls.dls" \
  "$DATA/reuse/site/debian-faq.en.docs.test" >/dev/null 2>&1
"$DITTO" scan --store "$WORK/db" --labelset "$WORK/ls.dls" --url-prefix http:// --progress none \
  "$DATA/reuse/site" "$DATA/wikipedia/pages" "$DATA/warc/big/debian-docs-html.warc.gz" >/dev/null 2>&1

# The worst neighborhood; in it, a short page copied from two sources or more (the page view
# highlights each copied block beside its source), else its worst page.
"$DITTO" report --store "$WORK/db" --format jsonl > "$WORK/report.jsonl" 2>/dev/null
"$DITTO" report --store "$WORK/db" --format jsonl --level page --threshold 0 --all > "$WORK/pages.jsonl" 2>/dev/null
read -r HOOD PAGE < <(python3 - "$WORK/report.jsonl" "$WORK/pages.jsonl" <<'PY'
import json, sys
hood = json.loads(open(sys.argv[1]).readline())["neighborhood"]
pages = [json.loads(l) for l in open(sys.argv[2])]
mine = [p for p in pages if p["neighborhood"].startswith(hood)]
several = [p for p in mine if len(p["sources"]) >= 2 and p["chunks"] >= 15]
pick = min(several, key=lambda p: p["chunks"]) if several else mine[0]
print(hood, pick["neighborhood"])
PY
)
# Two near replicas on different hosts (`ditto replicas`) that differ in a few blocks, sentences
# rather than single words where there is a choice.
"$DITTO" replicas --store "$WORK/db" > "$WORK/replicas.jsonl" 2>/dev/null
read -r REP_A REP_B < <(python3 - "$WORK/replicas.jsonl" <<'PY'
import json, sys
from urllib.parse import urlsplit
cands = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("kind") != "near":
        continue
    for m in r["members"]:
        d = m.get("differs")
        if not d or urlsplit(m["url"]).netloc == urlsplit(r["representative"]).netloc:
            continue
        n = (d["only_in_member"], d["only_in_representative"])
        long = min(sum(len(x.split()) >= 8 for x in d[k]) for k in ("member_sample", "representative_sample"))
        if min(n) >= 2 and sum(n) <= 30:
            cands.append((long, -sum(n), r["representative"], m["url"]))
best = max(cands)
print(best[2], best[3])
PY
)
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }

PORT=$((20000 + RANDOM % 20000))
"$DITTO" review --store "$WORK/db" --listen "127.0.0.1:$PORT" --reviewer docs >"$WORK/review.out" 2>&1 &
SERVER=$!
for _ in $(seq 50); do grep -q serving "$WORK/review.out" && break; sleep 0.1; done
BASE="http://127.0.0.1:$PORT"
# One label so the list shows a review state.
CSRF=$(curl -s "$BASE/" | python3 -c 'import re,sys; print(re.search(r"name=\"csrf\" value=\"([0-9a-f]+)\"", sys.stdin.read()).group(1))')
curl -s -o /dev/null -d "csrf=$CSRF&neighborhood=$(enc "$HOOD")&label=copied-for-profit&note=screenshot" "$BASE/label"

shot() { # url file height
  local profile; profile=$(mktemp -d)
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --hide-scrollbars --window-size=1280,"$3" \
    --screenshot="$ROOT/$2" "$1" >/dev/null 2>&1
  rm -rf "$profile"
  echo "wrote $2 ($1)"
}
mkdir -p docs
shot "$BASE/" docs/review-list.png 1000
shot "$BASE/n?name=$(enc "$HOOD")" docs/review-neighborhood.png 1000
shot "$BASE/p?url=$(enc "$PAGE")" docs/review-page.png 1000
shot "$BASE/d?a=$(enc "$REP_A")&b=$(enc "$REP_B")" docs/review-replica.png 1000
