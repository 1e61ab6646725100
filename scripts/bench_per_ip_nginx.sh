#!/usr/bin/env bash
# Politeness per server, counted from nginx's access log (issue 37, item 4): the 535-host web
# of scripts/focus_web.py served by one nginx that listens on many loopback addresses. The
# first half of the hosts (by name) sit on 127.0.0.1 (the "farm"), every other host on an
# address of its own (127.0.1.1, 127.0.1.2, ...), each mapped with --resolve. One
# `ditto crawl --focus bfs` with --per-ip-in-flight IN_FLIGHT and --per-ip-min-delay-ms GAP_MS
# (per host: --min-delay-ms DELAY_MS); then, per address from nginx's log ($server_addr; a
# request's start is its end less $request_time, to the millisecond): requests, the most in
# flight at once (nginx answers these static files within its millisecond, so this shows
# little: crawler/tests/per_ip_politeness.rs checks the in-flight bound with slow answers),
# the gaps between starts, the most started in one second, and when its last request ended;
# and per host the politeness violations of scripts/bench_crawl_nginx.sh.
#
#   scripts/bench_per_ip_nginx.sh            # DITTO, WORK, PORT, DELAY_MS, IN_FLIGHT, GAP_MS
#   MANY_HOSTS=1000 scripts/bench_per_ip_nginx.sh   # the web of scripts/many_hosts_web.py
#       with 1,000 hosts instead (500 on 127.0.0.1 beside 500 on addresses of their own)
#
# Loopback only. Needs Debian's nginx (nginx-light) and python3; builds the web and the label
# set under WORK as scripts/bench_crawl_nginx.sh does (the same WORK reuses them).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DITTO=${DITTO:-$ROOT/target/release/ditto}
WORK=${WORK:-/tmp/ditto-crawl-bench}
PORT=${PORT:-18723}
DELAY_MS=${DELAY_MS:-20}
IN_FLIGHT=${IN_FLIGHT:-4}
GAP_MS=${GAP_MS:-10}
DATA=${DATA:-$ROOT/../shared/data}
command -v nginx >/dev/null || { echo "nginx not found: apt-get install -y nginx-light" >&2; exit 2; }
[ -x "$DITTO" ] || { echo "$DITTO not built: cargo build --release --bin ditto" >&2; exit 2; }
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
MANY_HOSTS=${MANY_HOSTS:-}
if [ -n "$MANY_HOSTS" ]; then
    WEB="$WORK/many-$MANY_HOSTS"
    if [ ! -f "$WEB/web.json" ]; then
        python3 "$ROOT/scripts/many_hosts_web.py" --out "$WEB" --hosts "$MANY_HOSTS" --data "$DATA" >&2
    fi
else
    WEB="$WORK/web"
    if [ ! -f "$WEB/seeds.txt" ]; then
        python3 "$ROOT/scripts/focus_web.py" --out "$WEB" --data "$DATA" >&2
    fi
fi
if [ ! -f "$WORK/wiki.dls" ]; then
    "$DITTO" labelset build --name wikipedia --min-chars 100 -o "$WORK/wiki.dls" "$DATA/wikipedia/articles" >&2
fi

# Hosts and their addresses: the first half on 127.0.0.1, the others one address each.
mapfile -t HOSTS < <(ls "$WEB/hosts" | sort)
HALF=$(( ${#HOSTS[@]} / 2 ))
D="$WORK/per-ip"
rm -rf "$D" && mkdir -p "$D/nginx"
: >"$D/addresses"
for i in "${!HOSTS[@]}"; do
    if [ "$i" -lt "$HALF" ]; then addr=127.0.0.1; else k=$(( i - HALF + 1 )); addr="127.0.$(( 1 + k / 250 )).$(( 1 + k % 250 ))"; fi
    echo "${HOSTS[$i]} $addr" >>"$D/addresses"
done
LISTEN=$(cut -d' ' -f2 "$D/addresses" | sort -u | sed "s/.*/        listen &:$PORT;/")
cat >"$D/nginx/nginx.conf" <<EOF
worker_processes 2;
pid $D/nginx/nginx.pid;
error_log $D/nginx/error.log;
events { worker_connections 4096; }
http {
    types { text/html html; text/plain txt; }
    default_type text/html;
    log_format perip '\$msec \$server_addr \$host \$request_uri \$status \$request_time';
    access_log $D/nginx/access.log perip;
    client_body_temp_path $D/nginx/tmp-body;
    proxy_temp_path $D/nginx/tmp-proxy;
    fastcgi_temp_path $D/nginx/tmp-fastcgi;
    uwsgi_temp_path $D/nginx/tmp-uwsgi;
    scgi_temp_path $D/nginx/tmp-scgi;
    keepalive_requests 100000;
    server {
$LISTEN
        server_name ~^(?<vh>[a-z0-9.-]+)\$;
        root $WEB/hosts/\$vh;
        index index.html;
    }
}
EOF
RESOLVE=()
while read -r host addr; do RESOLVE+=(--resolve "$host=$addr:$PORT"); done <"$D/addresses"

nginx -c "$D/nginx/nginx.conf" -p "$D/nginx" 2>/dev/null
for _ in $(seq 100); do [ -s "$D/nginx/nginx.pid" ] && break; sleep 0.05; done
NGINX_PID=$(cat "$D/nginx/nginx.pid")
trap 'kill -QUIT "$NGINX_PID" 2>/dev/null || true' EXIT
load=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s.%N)
"$DITTO" crawl --store "$D/crawl.db" --labelset "$WORK/wiki.dls" --seeds "$WEB/seeds.txt" \
    --scope any "${RESOLVE[@]}" --min-delay-ms "$DELAY_MS" --focus bfs --threads 2 --progress none \
    --per-ip-in-flight "$IN_FLIGHT" --per-ip-min-delay-ms "$GAP_MS" --stats-json "$D/stats.json" \
    --user-agent "ditto-crawl-bench/0.1 (+http://localhost/)" >/dev/null 2>"$D/crawl.err" \
    || { echo "crawl failed, see $D/crawl.err" >&2; exit 1; }
end=$(date +%s.%N)
kill -QUIT "$NGINX_PID"; sleep 0.5
python3 - "$D/nginx/access.log" "$start" "$end" "$DELAY_MS" "$IN_FLIGHT" "$GAP_MS" "$load" <<'PY'
import sys
log, start, end, delay, in_flight, gap_ms, load = sys.argv[1:]
start, end, delay, in_flight, gap_ms = float(start), float(end), float(delay), int(in_flight), float(gap_ms)
rows = []
for line in open(log):
    p = line.split()
    if len(p) == 6:
        t_end, rt = float(p[0]), float(p[5])
        rows.append((t_end - rt, t_end, p[1], p[2]))
def report(name, reqs):
    reqs.sort()
    starts = [r[0] for r in reqs]
    gaps = [(b - a) * 1000 for a, b in zip(starts, starts[1:])]
    # A start before an end at the same instant: a request answered within the millisecond
    # still counts as in flight then.
    events = sorted([(r[0], 1) for r in reqs] + [(r[1], -1) for r in reqs], key=lambda e: (e[0], -e[1]))
    most = cur = 0
    for _, d in events:
        cur += d
        most = max(most, cur)
    hosts = len({r[3] for r in reqs})
    per_s = {}
    for t in starts:
        per_s[int(t)] = per_s.get(int(t), 0) + 1
    median = sorted(gaps)[len(gaps) // 2] if gaps else 0
    return (f"{name}: {len(reqs)} requests to {hosts} hosts, at most {most} at once, gaps between starts: "
            f"median {median:.1f} ms, {sum(g < gap_ms - 1 for g in gaps)} below {gap_ms - 1:.0f} ms, "
            f"{sum(g < gap_ms / 2 for g in gaps)} below {gap_ms / 2:.0f} ms; most in one second "
            f"{max(per_s.values()) if per_s else 0}; last ended {max(r[1] for r in reqs) - start:.2f} s after start")
farm = [r for r in rows if r[2] == "127.0.0.1"]
others = [r for r in rows if r[2] != "127.0.0.1"]
print(f"load average {load}; crawl {end - start:.2f} s; per address at most {in_flight} at once, "
      f"{gap_ms:.0f} ms apart; per host {delay:.0f} ms")
print(report("127.0.0.1", farm))
by_addr = {}
for r in others:
    by_addr.setdefault(r[2], []).append(r)
busiest = max(by_addr, key=lambda a: len(by_addr[a]))
print(f"the other {len(by_addr)} addresses: {len(others)} requests, last ended "
      f"{max(r[1] for r in others) - start:.2f} s after start; the busiest: {report(busiest, by_addr[busiest])}")
by_host = {}
for r in rows:
    by_host.setdefault(r[3], []).append(r)
close = overlap = 0
for reqs in by_host.values():
    reqs.sort()
    for a, b in zip(reqs, reqs[1:]):
        close += (b[0] - a[1]) * 1000 < delay - 1
        overlap += b[0] < a[1] - 0.001
print(f"per host: {close} gaps below {delay:.0f} ms after the previous answer, {overlap} two in flight")
PY
