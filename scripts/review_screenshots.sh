#!/usr/bin/env bash
# Screenshots of `ditto review` (list, neighborhood, page views) with headless Chromium over
# a store built from ../shared/data; written to docs/review-*.png.
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

# The worst neighborhood with a WARC-backed page if there is one, else the worst one.
"$DITTO" report --store "$WORK/db" --format jsonl --evidence 50 > "$WORK/report.jsonl" 2>/dev/null
read -r HOOD PAGE < <(python3 - "$WORK/report.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
pick = next((r for r in rows if any(".docs.test" not in e["url"] for e in r["evidence"])), rows[0])
ev = next((e for e in pick["evidence"] if ".docs.test" not in e["url"]), pick["evidence"][0])
print(pick["neighborhood"], ev["url"])
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
shot "$BASE/" docs/review-list.png 900
shot "$BASE/n?name=$(enc "$HOOD")" docs/review-neighborhood.png 1000
shot "$BASE/p?url=$(enc "$PAGE")" docs/review-page.png 1000
