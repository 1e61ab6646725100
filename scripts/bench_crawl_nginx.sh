#!/usr/bin/env bash
# Crawl throughput over >= 500 loopback hosts served by nginx, with detection inside, and
# politeness counted from nginx's own access log (issue 22, "Must show").
#
#   scripts/bench_crawl_nginx.sh [ROUNDS] [extra `ditto crawl` flags...]
#
# Environment (all optional): DITTO (default target/release/ditto), WORK (default
# /tmp/ditto-crawl-bench), PORT (18722), DELAY_MS (per-host crawl delay, 20), THREADS (2),
# FOCUS (bfs; `labeled` is the focused crawl users get by default), DATA (../shared/data).
#
# Steps: build the 535-host web of scripts/focus_web.py once under WORK/web (6,855 pages: one
# directory per virtual host), build the label set from DATA/wikipedia/articles once, then each
# round: start nginx (Debian `nginx` or `nginx-light`) on 127.0.0.1:PORT with one `server`
# whose root is WORK/web/hosts/$host and a fresh access log (`$msec $host $request_uri $status
# $request_time`), run `ditto crawl --focus bfs --scope any --resolve '*.focus.test=127.0.0.1:PORT'
# --min-delay-ms DELAY_MS` from the web's seeds into a fresh store until the frontier is
# empty, stop nginx, and print one line: pages stored, wall seconds of the crawl process,
# pages/s, requests in nginx's log, and politeness violations from that log — two consecutive
# requests to one host logged less than DELAY_MS apart (1 ms allowed for `$msec` rounding),
# or a request to a host that started before the previous one to it ended. The crawl's
# `--stats-json` (stage busy times) is kept as WORK/round-N.json. The load average is printed
# beside each round: on a shared machine, compare rounds of one run. Also printed: the CPU
# seconds (user + system) of the crawl process (with /usr/bin/time, Debian's `time`) and of
# nginx's processes, which share the machine's cores with it.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-3}
shift || true
DITTO=${DITTO:-$ROOT/target/release/ditto}
WORK=${WORK:-/tmp/ditto-crawl-bench}
FOCUS=${FOCUS:-bfs}
PORT=${PORT:-18722}
DELAY_MS=${DELAY_MS:-20}
THREADS=${THREADS:-2}
# One nginx on one loopback address stands in for 535 servers: no per-address bound by
# default (issue 37; the bound itself is checked by crawler/tests/per_ip_politeness.rs).
# PER_IP_ARGS="" crawls them under the default bound (8 at once, --min-delay-ms/10 apart).
PER_IP_ARGS=${PER_IP_ARGS---per-ip-in-flight 0 --per-ip-min-delay-ms 0}
DATA=${DATA:-$ROOT/../shared/data}
command -v nginx >/dev/null || { echo "nginx not found: apt-get install -y nginx-light" >&2; exit 2; }
[ -x "$DITTO" ] || { echo "$DITTO not built: cargo build --release --bin ditto" >&2; exit 2; }
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
if [ ! -f "$WORK/web/seeds.txt" ]; then
    python3 "$ROOT/scripts/focus_web.py" --out "$WORK/web" --data "$DATA" >&2
fi
if [ ! -f "$WORK/wiki.dls" ]; then
    "$DITTO" labelset build --name wikipedia --min-chars 100 -o "$WORK/wiki.dls" "$DATA/wikipedia/articles" >&2
fi

mkdir -p "$WORK/nginx"
cat >"$WORK/nginx/nginx.conf" <<EOF
worker_processes 2;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections 4096; }
http {
    types { text/html html; text/plain txt; }
    default_type text/html;
    log_format bench '\$msec \$host \$request_uri \$status \$request_time';
    access_log $WORK/nginx/access.log bench;
    client_body_temp_path $WORK/nginx/tmp-body;
    proxy_temp_path $WORK/nginx/tmp-proxy;
    fastcgi_temp_path $WORK/nginx/tmp-fastcgi;
    uwsgi_temp_path $WORK/nginx/tmp-uwsgi;
    scgi_temp_path $WORK/nginx/tmp-scgi;
    keepalive_requests 100000;
    server {
        listen 127.0.0.1:$PORT;
        server_name ~^(?<vh>[a-z0-9.-]+)\$;
        root $WORK/web/hosts/\$vh;
        index index.html;
    }
}
EOF

NGINX_PID=
stop_nginx() {
    if [ -n "$NGINX_PID" ]; then
        kill -QUIT "$NGINX_PID" 2>/dev/null || true
        for _ in $(seq 100); do [ -e "$WORK/nginx/nginx.pid" ] || break; sleep 0.05; done
        NGINX_PID=
    fi
}
trap stop_nginx EXIT

echo "web: $(cat "$WORK/web/web.json" | python3 -c 'import json,sys; w=json.load(sys.stdin); print(w["hosts"], "hosts,", w["pages"], "pages")'); delay ${DELAY_MS} ms; threads $THREADS; $(nproc) cores"
for round in $(seq "$ROUNDS"); do
    rm -f "$WORK/nginx/access.log"
    rm -rf "$WORK/crawl.db"
    nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" 2>/dev/null
    for _ in $(seq 100); do [ -s "$WORK/nginx/nginx.pid" ] && break; sleep 0.05; done
    NGINX_PID=$(cat "$WORK/nginx/nginx.pid")
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    timer=()
    [ -x /usr/bin/time ] && timer=(/usr/bin/time -f "%U %S" -o "$WORK/round-$round.time")
    rm -f "$WORK/round-$round.time"
    start=$(date +%s.%N)
    "${timer[@]}" "$DITTO" crawl --store "$WORK/crawl.db" --labelset "$WORK/wiki.dls" --seeds "$WORK/web/seeds.txt" \
        --scope any --resolve "*.focus.test=127.0.0.1:$PORT" --min-delay-ms "$DELAY_MS" \
        --focus "$FOCUS" --threads "$THREADS" --progress none --stats-json "$WORK/round-$round.json" \
        $PER_IP_ARGS \
        --user-agent "ditto-crawl-bench/0.1 (+http://localhost/)" "$@" >/dev/null 2>"$WORK/round-$round.err" \
        || { echo "crawl failed, see $WORK/round-$round.err" >&2; exit 1; }
    end=$(date +%s.%N)
    # nginx's CPU seconds (master and workers), from /proc before it stops.
    nginx_cpu=$(for p in "$NGINX_PID" $(pgrep -P "$NGINX_PID" || true); do cut -d' ' -f14,15 "/proc/$p/stat" 2>/dev/null; done \
        | awk -v hz="$(getconf CLK_TCK)" '{t += $1 + $2} END {printf "%.2f", t / hz}')
    crawl_cpu=$(awk '{printf "%.2f", $1 + $2}' "$WORK/round-$round.time" 2>/dev/null || echo "?")
    stop_nginx
    python3 - "$WORK/nginx/access.log" "$WORK/round-$round.json" "$start" "$end" "$DELAY_MS" "$round" "$load" \
        "$crawl_cpu" "$nginx_cpu" <<'PY'
import json, sys
log, stats, start, end, delay, rnd, load, crawl_cpu, nginx_cpu = sys.argv[1:]
start, end, delay = float(start), float(end), float(delay)
rows = []
for line in open(log):
    p = line.split()
    if len(p) == 5:
        rows.append((float(p[0]), p[1], p[2], int(p[3]), float(p[4])))
rows.sort()
by_host = {}
for r in rows:
    by_host.setdefault(r[1], []).append(r)
close, overlap, min_gap = 0, 0, float("inf")
for reqs in by_host.values():
    for a, b in zip(reqs, reqs[1:]):
        gap = (b[0] - a[0]) * 1000
        min_gap = min(min_gap, gap)
        close += gap < delay - 1
        overlap += b[0] - b[4] < a[0] - 0.001
pages = sum(1 for r in rows if r[3] == 200 and not r[2].endswith("/robots.txt"))
s = json.load(open(stats))
stored = s.get("pages_stored", s.get("stored", pages))
busy = {k: round(v.get("busy_s", 0), 2) for k, v in s.get("stages", {}).items()} if isinstance(s.get("stages"), dict) else {}
wall = end - start
first_start = min(r[0] - r[4] for r in rows) if rows else start
last_end = max(r[0] for r in rows) if rows else end
print(f"round {rnd}: {pages} pages (HTTP 200, robots.txt left out) in {wall:.2f} s = {pages / wall:,.0f} pages/s; "
      f"{len(rows)} requests to {len(by_host)} hosts; politeness violations: {close} closer than {delay:.0f} ms, "
      f"{overlap} two in flight (smallest gap {min_gap:.1f} ms); CPU s: crawl {crawl_cpu}, nginx {nginx_cpu}; "
      f"load average {load}; first request {first_start - start:.3f} s after start, exit {end - last_end:.3f} s after the last")
PY
done
