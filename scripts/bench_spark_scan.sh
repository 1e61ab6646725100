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

# CPU seconds of a command and all its descendants (JVM, Python workers), from a cgroup-v1
# cpuacct group when one can be made (root); "nan" otherwise. Usage: cpu_of NAME CMD...;
# the figure is left in $WORK/NAME.cpu.
CG=/sys/fs/cgroup/cpuacct
cpu_of() {
    local name=$1
    shift
    local g="$CG/ditto-bench-$$-$name"
    if mkdir "$g" 2>/dev/null; then
        local rc=0
        sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$g" "$@" || rc=$?
        sleep 1
        echo "$(cat "$g/cpuacct.usage") / 1000000000" | bc -l >"$WORK/$name.cpu"
        rmdir "$g" 2>/dev/null || true
        return $rc
    fi
    echo nan >"$WORK/$name.cpu"
    "$@"
}

# 1. ditto scan, one worker per stage, pinned.
rm -rf "$WORK/d.db"
t0=$(now)
(cd "$WORK/srv" && cpu_of ditto xargs -d '\n' -a "$WORK/list.txt" "${PIN[@]}" "$DITTO" scan --store "$WORK/d.db" \
    --labelset "$WORK/w.dls" --threads 1 --progress none >/dev/null 2>"$WORK/ditto.err") || true
t1=$(now)
DITTO_S=$(echo "$t1 - $t0" | bc -l)
"$DITTO" report --store "$WORK/d.db" --format jsonl >"$WORK/ditto.report.jsonl"

# 1b. The wheel alone (Detector.scan_warc in one Python process, no Spark), pinned.
WHEEL_S=$(cd "$WORK/srv" && "${PIN[@]}" "$PY" - "$WORK/w.dls" "$WORK/list.txt" <<'EOF'
import sys, time, ditto_detect
det = ditto_detect.Detector(sys.argv[1], links=False)
files = [l.strip() for l in open(sys.argv[2]) if l.strip()]
t = time.time()
time.process_time()
pages = 0
for f in files:
    s = det.scan_warc(f)
    pages += len(s.pages)
print(time.time() - t, time.process_time())
EOF
)
WHEEL_CPU=${WHEEL_S#* }
WHEEL_S=${WHEEL_S% *}
echo "$WHEEL_CPU" >"$WORK/wheel.cpu"

run_spark() {
    local out=$1
    shift
    rm -rf "$out"
    local t0 t1
    t0=$(now)
    rm -rf "$out.events"
    cpu_of "$(basename "$out")" "${PIN[@]}" "$PY" "$ROOT/examples/spark/scan.py" --master 'local[1]' --labelset "$WORK/w.dls" \
        --out "$out" --partitions 2 --event-log "$out.events" "$@" 2>"$out.err" >/dev/null || { tail -20 "$out.err" >&2; exit 1; }
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

# 4. ditto scan again, to bracket the Spark runs under the same load.
rm -rf "$WORK/d2.db"
t0=$(now)
(cd "$WORK/srv" && cpu_of ditto2 xargs -d '\n' -a "$WORK/list.txt" "${PIN[@]}" "$DITTO" scan --store "$WORK/d2.db" \
    --labelset "$WORK/w.dls" --threads 1 --progress none >/dev/null 2>>"$WORK/ditto.err") || true
t1=$(now)
DITTO2_S=$(echo "$t1 - $t0" | bc -l)

"$PY" - "$WORK" "$BYTES" "$DITTO_S" "$LOCAL_WALL" "$HTTP_WALL" "$DITTO2_S" "$WHEEL_S" <<'EOF'
import json, sys
work, size, ditto_s, local_wall, http_wall, ditto2_s, wheel_s = sys.argv[1], int(sys.argv[2]), *map(float, sys.argv[3:])
def rows(p):
    return [json.loads(l) for l in open(p) if l.strip()]
import glob
want = rows(f"{work}/ditto.report.jsonl")
mb = size / 1e6
def cpu(name):
    return float(open(f"{work}/{name}.cpu").read())
def per_cpu(name):
    c = cpu(name)
    return f"{c:.2f} CPU s = {mb / c:.2f} MB per CPU second" if c == c else "CPU not measured"
print(f"input: {mb:.1f} MB of WARC files")
print(f"ditto scan --threads 1 (pinned): {ditto_s:.2f} s wall = {mb / ditto_s:.2f} MB/s, {per_cpu('ditto')}; "
      f"again after the Spark runs: {ditto2_s:.2f} s = {mb / ditto2_s:.2f} MB/s, {per_cpu('ditto2')}")
print(f"ditto_detect Detector.scan_warc in one Python process (pinned): {wheel_s:.2f} s = {mb / wheel_s:.2f} MB/s, {per_cpu('wheel')}")
for name, wall in (("local paths", local_wall), ("loopback HTTP", http_wall)):
    s = json.load(open(f"{work}/spark-{name.split()[0] if name.startswith('local') else 'http'}/summary.json"))
    got = [json.loads(l) for p in sorted(glob.glob(f"{work}/spark-{'local' if name.startswith('local') else 'http'}/report.jsonl/part-*")) for l in open(p) if l.strip()]
    same = "same report" if got == want else "REPORT DIFFERS"
    print(
        f"spark local[1], {name}: scan stage {s['timings']['scan_s']:.2f} s = {mb / s['timings']['scan_s']:.2f} MB/s; "
        f"in tasks {s['task_seconds']:.2f} s = {mb / s['task_seconds']:.2f} MB/s; job wall {wall:.1f} s "
        f"= {mb / wall:.2f} MB/s, {per_cpu('spark-' + ('local' if name.startswith('local') else 'http'))} "
        f"({s['files_ok']}/{s['files']} files, {s['pages_analysed']} pages, {s['flagged']} flagged; {same})"
    )
EOF

# Bytes each stage wrote (shuffle and files), from the HTTP run's event log, and the sizes of
# the outputs.
"$PY" - "$WORK/spark-http.events" "$WORK/spark-http" <<'EOF'
import glob, json, os, sys
events, out = sys.argv[1], sys.argv[2]
names = {"internal.metrics.shuffle.write.bytesWritten": "shuffle_write",
         "internal.metrics.output.bytesWritten": "output",
         "internal.metrics.executorRunTime": "run_ms",
         "internal.metrics.executorCpuTime": "cpu_ns"}
print(f"{'stage':<45} {'tasks':>5} {'run s':>7} {'cpu s':>7} {'shuffle write':>13} {'files written':>13}")
tot = {}
paths = sorted(os.path.join(r, f) for r, _, fs in os.walk(events) for f in fs if not f.startswith(".") and not f.startswith("appstatus"))
for path in paths:
    for line in open(path):
        e = json.loads(line)
        if e.get("Event") != "SparkListenerStageCompleted":
            continue
        info = e["Stage Info"]
        m = {names[a["Name"]]: int(a["Value"]) for a in info.get("Accumulables", []) if a.get("Name") in names}
        for k, v in m.items():
            tot[k] = tot.get(k, 0) + v
        print(f"{info['Stage Name'][:45]:<45} {info['Number of Tasks']:>5} {m.get('run_ms', 0) / 1e3:>7.2f} "
              f"{m.get('cpu_ns', 0) / 1e9:>7.2f} {m.get('shuffle_write', 0):>13} {m.get('output', 0):>13}")
print(f"{'total':<45} {'':>5} {tot.get('run_ms', 0) / 1e3:>7.2f} {tot.get('cpu_ns', 0) / 1e9:>7.2f} "
      f"{tot.get('shuffle_write', 0):>13} {tot.get('output', 0):>13}")
for d in sorted(os.listdir(out)):
    p = os.path.join(out, d)
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(p) for f in fs) if os.path.isdir(p) else os.path.getsize(p)
    print(f"output {d}: {size} bytes")
EOF
