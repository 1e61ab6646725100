#!/usr/bin/env bash
# Edited-copy test webs (issue 36): for every row (kind of edit) generate the web
# (`testweb::edited`, the example `gen_edited_web`), build the label set from its labeled
# articles, `ditto scan` it, `ditto report --format jsonl` it with default settings, and print
# host- and directory-level precision and recall against the web's truth.json.
#
#   scripts/eval_edited_web.sh [options] DITTO_BIN [-- EXTRA_SCAN_FLAGS...]
#
# options:
#   --rows a,b,c     rows to run (default: all; `gen_edited_web --list` names them)
#   --seed N         generator seed (default 1)
#   --holdout        the "never tune" variant (another article split, another random stream)
#   --scale S        full (default; 28 hosts, 700 pages) or small (the integration test's)
#   --work DIR       where webs, label sets, stores and reports go (default: a new temp dir)
#   --gen BIN        the generator (default: built with cargo into target/release/examples)
#   --json FILE      also write one JSON object per row to FILE
#
# Scoring (one definition, the one issue 36's table implies: with it, the unedited row gives
# recall 1.0):
#   host flagged       some reported neighborhood lies under http://HOST/ (the root or a directory)
#   directory flagged  a reported neighborhood is http://HOST/DIR/ or lies under it
#   host root          (extra column) the root neighborhood http://HOST/ itself is reported
# Truth: copying hosts are the content farms that copy labeled articles; copying directories
# are their directories holding such copies. Every other host (independent topical pages,
# one-sentence quotes, shared boilerplate, shared templates, copies of unlabeled articles)
# is innocent. "labeled chunks" sums labeled_chunks of `ditto report --level page
# --threshold 0` over pages of copying hosts (and, in "innoc. chunks", of innocent hosts).
# "pages P/R" is `--level page` at the default threshold against the copied pages.
# Needs bash, python3 (stdlib) and cargo (to build the generator when --gen is not given).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROWS=all SEED=1 HOLDOUT="" SCALE=full WORK="" GEN="" JSON_OUT=""
usage() { sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --rows) ROWS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --holdout) HOLDOUT=--holdout; shift ;;
    --scale) SCALE=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --gen) GEN=$2; shift 2 ;;
    --json) JSON_OUT=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    -*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    *) break ;;
  esac
done
DITTO=${1:-}
[[ -n $DITTO ]] || { usage >&2; exit 2; }
shift
[[ ${1:-} == -- ]] && shift
SCAN_FLAGS=("$@")
DITTO=$(cd "$(dirname "$DITTO")" && pwd)/$(basename "$DITTO")
[[ -x $DITTO ]] || { echo "not an executable: $DITTO" >&2; exit 2; }

if [[ -z $GEN ]]; then
  (cd "$ROOT" && cargo build --release -q -p testweb --example gen_edited_web)
  GEN=$ROOT/target/release/examples/gen_edited_web
fi
if [[ $ROWS == all ]]; then
  ROWS=$("$GEN" --list | cut -f1 | paste -sd, -)
fi
[[ -n $WORK ]] || WORK=$(mktemp -d /tmp/eval_edited_web.XXXXXX)
mkdir -p "$WORK"
RESULTS=$WORK/results.jsonl
: > "$RESULTS"

echo "ditto: $DITTO ($("$DITTO" --version 2>/dev/null || echo unknown version))" >&2
echo "scan flags: ${SCAN_FLAGS[*]:-(none)}; seed $SEED ${HOLDOUT:-(tune split)}; scale $SCALE; work $WORK" >&2

# step LOG CMD...: run CMD with stdout and stderr to LOG; on failure show LOG and stop.
step() {
  local log=$1
  shift
  if ! "$@" > "$log" 2>&1; then
    echo "failed: $*" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
}

IFS=, read -r -a ROW_LIST <<< "$ROWS"
for row in "${ROW_LIST[@]}"; do
  d=$WORK/$row
  rm -rf "$d"
  mkdir -p "$d"
  "$GEN" --edit "$row" --seed "$SEED" --scale "$SCALE" $HOLDOUT --out "$d/gen" > "$d/gen.txt"
  t0=$(date +%s.%N)
  step "$d/labelset.txt" "$DITTO" labelset build --name wikipedia --min-chars 100 -o "$d/labels.dls" "$d/gen/labelset"
  t1=$(date +%s.%N)
  step "$d/scan.txt" "$DITTO" scan --progress none --store "$d/store" --labelset "$d/labels.dls" \
    --url-prefix http:// --stats-json "$d/scan-stats.json" "${SCAN_FLAGS[@]}" "$d/gen/web"
  t2=$(date +%s.%N)
  "$DITTO" report --store "$d/store" --format jsonl > "$d/report.jsonl" 2> "$d/report.err"
  "$DITTO" report --store "$d/store" --format jsonl --level page > "$d/pages.jsonl" 2> "$d/pages.err"
  "$DITTO" report --store "$d/store" --format jsonl --level page --threshold 0 --evidence 0 \
    > "$d/pages0.jsonl" 2> "$d/pages0.err"
  python3 - "$d" "$row" "$t0" "$t1" "$t2" >> "$RESULTS" <<'PY'
import json, sys
d, row, t0, t1, t2 = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:6])
truth = json.load(open(f"{d}/gen/truth.json"))

def rows(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]

def root_of(url):
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0]}/"

def dir_of(prefix):
    # http://host/dir/... -> http://host/dir/ ; the root -> None
    scheme, rest = prefix.split("://", 1)
    parts = rest.split("/")
    if len(parts) < 3 or parts[1] == "":
        return None
    return f"{scheme}://{parts[0]}/{parts[1]}/"

def pr(flagged, truth_set):
    tp = len(flagged & truth_set)
    p = tp / len(flagged) if flagged else None
    r = tp / len(truth_set) if truth_set else None
    return p, r

rep = rows(f"{d}/report.jsonl")
reported = {r["neighborhood"] for r in rep}
copying_hosts = set(truth["copying_hosts"])
innocent_hosts = set(truth["innocent_hosts"])
copying_dirs = set(truth["copying_dirs"])
flag_hosts = {root_of(n) for n in reported}
flag_roots = {n for n in reported if dir_of(n) is None}
flag_dirs = {dir_of(n) for n in reported if dir_of(n) is not None}
hp, hr = pr(flag_hosts, copying_hosts)
rp, rr = pr(flag_roots, copying_hosts)
dp, dr = pr(flag_dirs, copying_dirs)

copied = {p["url"] for h in truth["hosts"] for dd in h["dirs"] for p in dd["pages"] if p["copies"] and p["labeled"]}
page_rep = {r["neighborhood"] for r in rows(f"{d}/pages.jsonl")}
pp, prr = pr(page_rep, copied)
chunks_copying = chunks_innocent = 0
for r in rows(f"{d}/pages0.jsonl"):
    h = root_of(r["neighborhood"])
    if h in copying_hosts:
        chunks_copying += r["labeled_chunks"]
    elif h in innocent_hosts:
        chunks_innocent += r["labeled_chunks"]
try:
    stats = json.load(open(f"{d}/scan-stats.json"))
except Exception:
    stats = {}
out = {
    "row": row,
    "edit": truth["edit_description"],
    "seed": truth["seed"],
    "holdout": truth["holdout"],
    "hosts": len(truth["hosts"]),
    "pages": truth["pages"],
    "copying_hosts": len(copying_hosts),
    "copying_dirs": len(copying_dirs),
    "host_precision": hp, "host_recall": hr,
    "root_precision": rp, "root_recall": rr,
    "dir_precision": dp, "dir_recall": dr,
    "page_precision": pp, "page_recall": prr,
    "innocent_hosts_flagged": sorted(flag_hosts & innocent_hosts),
    "reported_neighborhoods": len(reported),
    "labeled_chunks_copying_hosts": chunks_copying,
    "labeled_chunks_innocent_hosts": chunks_innocent,
    "labelset_build_s": round(t1 - t0, 3),
    "scan_s": round(t2 - t1, 3),
}
print(json.dumps(out))
PY
  tail -n 1 "$RESULTS" | python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); print("%s: host P/R %s/%s, dir P/R %s/%s" % (r["row"], r["host_precision"], r["host_recall"], r["dir_precision"], r["dir_recall"]), file=sys.stderr)'
done

[[ -z $JSON_OUT ]] || cp "$RESULTS" "$JSON_OUT"
python3 - "$RESULTS" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
f = lambda v: "n/a" if v is None else f"{v:.2f}"
print("| row | what the copier did to each copied paragraph | host P | host R | dir P | dir R | host-root R | page P | page R | labeled chunks on copying hosts | on innocent hosts | innocent hosts flagged | scan s |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for r in rs:
    print(f"| {r['row']} | {r['edit'].replace('<', '&lt;').replace('|', '/')} | {f(r['host_precision'])} | {f(r['host_recall'])} | "
          f"{f(r['dir_precision'])} | {f(r['dir_recall'])} | {f(r['root_recall'])} | {f(r['page_precision'])} | {f(r['page_recall'])} | "
          f"{r['labeled_chunks_copying_hosts']:,} | {r['labeled_chunks_innocent_hosts']:,} | {len(r['innocent_hosts_flagged'])} | {r['scan_s']:.2f} |")
if rs:
    r = rs[0]
    print(f"\n{r['hosts']} hosts ({r['copying_hosts']} copying), {r['copying_dirs']} copying directories, {r['pages']} pages per web; seed {r['seed']}, holdout {r['holdout']}.")
PY
