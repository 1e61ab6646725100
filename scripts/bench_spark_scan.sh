#!/usr/bin/env bash
# Throughput per core of examples/spark/scan.py (Spark local mode, one task slot) beside
# `ditto scan --threads 1` on the same WARC files (../shared/data/warc/*, issue 24), run one
# after the other so the ratio is measured under the same load. Both pinned to one core
# (taskset) when it is available; the loopback file server runs beside them.
#
#   scripts/bench_spark_scan.sh        (needs target/release/ditto, target/spark-venv with
#                                       pyspark and the ditto_detect wheel: tests/it/spark_scan.rs
#                                       installs both; Java)
# Prints MB/s of compressed WARC input: ditto from local disk, the Spark job from local paths
# and over loopback HTTP (per task second and per wall second of the scan stage), and the
# job's whole wall time.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DITTO=${DITTO:-$ROOT/target/release/ditto}
PY=${PY:-$ROOT/target/spark-venv/bin/python}
WORK=${WORK:-$(mktemp -d)}
CORE=${CORE:-0}
DATA=$ROOT/../shared/data
PIN=()
if command -v taskset >/dev/null; then PIN=(taskset -c "$CORE"); fi

mkdir -p "$WORK/srv"
# The WARC files of the shared data (*.warc, *.warc.gz), in the same tree.
: >"$WORK/list.txt"
while IFS= read -r f; do
    rel=${f#"$DATA/warc/"}
    mkdir -p "$WORK/srv/$(dirname "$rel")"
    cp "$f" "$WORK/srv/$rel"
    echo "$rel" >>"$WORK/list.txt"
done < <(find "$DATA/warc" -type f \( -name '*.warc' -o -name '*.warc.gz' \) | sort)
gzip -c "$WORK/list.txt" >"$WORK/warc.paths.gz"
FILES=$(wc -l <"$WORK/list.txt")
BYTES=$(cd "$WORK/srv" && cat "$WORK/list.txt" | xargs -d '\n' stat -c %s | awk '{s+=$1} END {print s}')
echo "== $FILES files, $BYTES bytes; work dir $WORK" >&2

if [ ! -f "$WORK/w.dls" ]; then
    "$DITTO" labelset build --name wikipedia --min-chars 100 --url-prefix https://en.wikipedia.org/wiki/ \
        -o "$WORK/w.dls" "$DATA/wikipedia/articles" >/dev/null
fi

now() { date +%s.%N; }

# 1. ditto scan, one worker per stage, pinned.
rm -rf "$WORK/d.db"
t0=$(now)
(cd "$WORK/srv" && xargs -d '\n' -a "$WORK/list.txt" "${PIN[@]}" "$DITTO" scan --store "$WORK/d.db" \
    --labelset "$WORK/w.dls" --threads 1 --progress none >/dev/null 2>"$WORK/ditto.err") || true
t1=$(now)
DITTO_S=$(echo "$t1 - $t0" | bc -l)
"$DITTO" report --store "$WORK/d.db" --format jsonl >"$WORK/ditto.report.jsonl"

# 2. The Spark job, local[1], from local paths.
run_spark() {
    local out=$1
    shift
    rm -rf "$out"
    local t0 t1
    t0=$(now)
    "${PIN[@]}" "$PY" "$ROOT/examples/spark/scan.py" --master 'local[1]' --labelset "$WORK/w.dls" \
        --out "$out" --partitions 2 "$@" 2>"$out.err" >/dev/null || { tail -20 "$out.err" >&2; exit 1; }
    t1=$(now)
    echo "$t1 - $t0" | bc -l
}
LOCAL_WALL=$(run_spark "$WORK/spark-local" $(sed "s|^|$WORK/srv/|" "$WORK/list.txt"))

# 3. The Spark job, local[1], over loopback HTTP.
"$PY" "$ROOT/examples/spark/range_server.py" "$WORK/srv" --port 0 >"$WORK/server.out" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do grep -q listening "$WORK/server.out" && break; sleep 0.1; done
BASE=$(sed -n 's/^listening on //p' "$WORK/server.out")
HTTP_WALL=$(run_spark "$WORK/spark-http" --input-list "$WORK/warc.paths.gz" --base-url "$BASE")

"$PY" - "$WORK" "$BYTES" "$DITTO_S" "$LOCAL_WALL" "$HTTP_WALL" <<'EOF'
import json, sys
work, size, ditto_s, local_wall, http_wall = sys.argv[1], int(sys.argv[2]), *map(float, sys.argv[3:])
def rows(p):
    return [json.loads(l) for l in open(p) if l.strip()]
import glob
want = rows(f"{work}/ditto.report.jsonl")
mb = size / 1e6
print(f"input: {mb:.1f} MB of WARC files")
print(f"ditto scan --threads 1 (pinned): {ditto_s:.2f} s wall = {mb / ditto_s:.2f} MB/s")
for name, wall in (("local paths", local_wall), ("loopback HTTP", http_wall)):
    s = json.load(open(f"{work}/spark-{name.split()[0] if name.startswith('local') else 'http'}/summary.json"))
    got = [json.loads(l) for p in sorted(glob.glob(f"{work}/spark-{'local' if name.startswith('local') else 'http'}/report.jsonl/part-*")) for l in open(p) if l.strip()]
    same = "same report" if got == want else "REPORT DIFFERS"
    print(
        f"spark local[1], {name}: scan stage {s['timings']['scan_s']:.2f} s = {mb / s['timings']['scan_s']:.2f} MB/s; "
        f"in tasks {s['task_seconds']:.2f} s = {mb / s['task_seconds']:.2f} MB/s; job wall {wall:.1f} s "
        f"({s['files_ok']}/{s['files']} files, {s['pages_analysed']} pages, {s['flagged']} flagged; {same})"
    )
EOF
