#!/usr/bin/env bash
# The crawler at 1,000, 10,000 and 100,000 hosts (issue 37, "Must show"): CPU per fetched
# page and peak memory of `ditto crawl` as a process, the failures in its --failure-log, and
# politeness per host and per address counted from nginx's access log.
#
#   scripts/bench_many_hosts_nginx.sh [ROUNDS]      # default 3
#
# Environment (all optional): DITTO (target/release/ditto), DITTO_B (a second binary: each run
# is then made with DITTO and DITTO_B in turn, A then B, and the medians are given per binary
# with B's ratio to A, the way to compare builds on this noisy VM), WORK
# (/tmp/ditto-many-hosts), PORT (18737), SIZES ("1000 10000 100000"), FOCI ("labeled bfs"),
# ADDRESSES (8), DELAY_MS (per-host delay, 20), MAX_PAGES (page budget, 20000), THREADS (2),
# PER_IP_ARGS (extra per-address flags; empty by default: the crawler's default bound,
# --per-ip-in-flight 8 and --min-delay-ms/10 between starts per address), CRAWL_ARGS (more
# flags for every crawl, e.g. "--per-host-max-pages 1": a host opened for every page, which
# with the plain run prices a page and a new host apart; docs/benchmarks/issue-37.md,
# "Session 8"), DATA (../shared/data).
#
# Per size N, once: the web of scripts/many_hosts_web.py (N hosts, 3 pages each, on ADDRESSES
# loopback addresses 127.0.37.x) under WORK/web-N, and a `--config` file mapping every host
# name to its address and PORT (`resolve = ["HOST=ADDR:PORT", ...]`: the command line could
# not hold 100,000 --resolve flags); the label set from DATA/wikipedia/articles under WORK.
# Each round runs every size and focus in turn (so the figures of one round share the
# machine's load): nginx (Debian's, one catch-all server whose root is web-N/hosts/$host,
# listening on the ADDRESSES addresses) started with a fresh access log, one `ditto crawl` from
# the web's seeds into a fresh store, timed by /usr/bin/time (user+sys CPU seconds, peak RSS),
# then nginx stopped and one line printed: pages fetched (the crawl's stats), CPU ms per page,
# peak RSS, wall seconds, failure-log lines by event (with a sample reason), and politeness
# from nginx's log: per host, a request that started less than DELAY_MS after the previous
# one to that host ended (1 ms allowed for the log's rounding) or while it was in flight; per
# address, the most in flight at once, the most starts in a 100-ms window and the windows
# holding more than the gap allows (102/gap + 1: nginx's stamps are 1 ms, cached per turn of
# its event loop, so each end of a window may be 1 ms off), and pairs of starts closer than
# the gap less 1 ms (for the same reason, a pair can show closer than the crawler sent
# them); a run with more in flight at an address than the bound keeps nginx's log in its
# run directory (WORK/run-N-FOCUS-ROUND...), for a look. Failures of the crawler's connection
# handling: failure-log lines of fetch errors, unavailable robots.txt, given-up or retired
# URLs. At the end, the median of the rounds per size, focus and binary, with requests per
# page.
# Loopback only; needs nginx (nginx-light), python3 and /usr/bin/time (Debian `time`).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-3}
DITTO=${DITTO:-$ROOT/target/release/ditto}
WORK=${WORK:-/tmp/ditto-many-hosts}
PORT=${PORT:-18737}
SIZES=${SIZES:-1000 10000 100000}
FOCI=${FOCI:-labeled bfs}
ADDRESSES=${ADDRESSES:-8}
DELAY_MS=${DELAY_MS:-20}
MAX_PAGES=${MAX_PAGES:-20000}
THREADS=${THREADS:-2}
PER_IP_ARGS=${PER_IP_ARGS:-}
CRAWL_ARGS=${CRAWL_ARGS:-}
DATA=${DATA:-$ROOT/../shared/data}
command -v nginx >/dev/null || { echo "nginx not found: apt-get install -y nginx-light" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time not found: apt-get install -y time" >&2; exit 2; }
[ -x "$DITTO" ] || { echo "$DITTO not built: cargo build --release --bin ditto" >&2; exit 2; }
DITTO_B=${DITTO_B:-}
[ -z "$DITTO_B" ] || [ -x "$DITTO_B" ] || { echo "DITTO_B=$DITTO_B is not an executable" >&2; exit 2; }
BINARIES="A"
[ -z "$DITTO_B" ] || BINARIES="A B"
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
if [ ! -f "$WORK/wiki.dls" ]; then
    "$DITTO" labelset build --name wikipedia --min-chars 100 -o "$WORK/wiki.dls" "$DATA/wikipedia/articles" >&2
fi
for n in $SIZES; do
    web="$WORK/web-$n"
    if [ ! -f "$web/web.json" ]; then
        rm -rf "$web"
        python3 "$ROOT/scripts/many_hosts_web.py" --out "$web" --hosts "$n" --addresses "$ADDRESSES" --data "$DATA" >&2
    fi
    if [ ! -f "$web/resolve-$PORT.toml" ]; then
        awk -v port="$PORT" 'BEGIN { print "resolve = [" } { printf "  \"%s=%s:%s\",\n", $1, $2, port } END { print "]" }' \
            "$web/addresses.tsv" >"$web/resolve-$PORT.toml"
    fi
done

N="$WORK/nginx"
mkdir -p "$N"
LISTEN=$(for i in $(seq "$ADDRESSES"); do echo "        listen 127.0.37.$i:$PORT;"; done)
write_conf() { # $1: the web's hosts directory
    cat >"$N/nginx.conf" <<EOF
worker_processes 2;
worker_rlimit_nofile 65536;
pid $N/nginx.pid;
error_log $N/error.log;
events { worker_connections 16384; }
http {
    types { text/html html; text/plain txt; }
    default_type text/html;
    log_format many '\$msec \$server_addr \$host \$request_uri \$status \$request_time';
    access_log $N/access.log many buffer=256k;
    # Every host lacks robots.txt: without this each such request (and each sitemap 404)
    # also writes an error line, on the cores the crawl is measured on (0.5 GB over a day of
    # runs).
    log_not_found off;
    client_body_temp_path $N/tmp-body;
    proxy_temp_path $N/tmp-proxy;
    fastcgi_temp_path $N/tmp-fastcgi;
    uwsgi_temp_path $N/tmp-uwsgi;
    scgi_temp_path $N/tmp-scgi;
    keepalive_requests 100000;
    server {
$LISTEN
        server_name ~^(?<vh>[a-z0-9.-]+)\$;
        root $1/\$vh;
        index index.html;
    }
}
EOF
}
NGINX_PID=
stop_nginx() {
    if [ -n "$NGINX_PID" ]; then
        kill -QUIT "$NGINX_PID" 2>/dev/null || true
        for _ in $(seq 200); do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.05; done
        NGINX_PID=
    fi
}
trap stop_nginx EXIT

RESULTS="$WORK/results.tsv"
: >"$RESULTS"
echo "$(date -u '+%F %T UTC'); $(nproc) cores; uptime: $(uptime); ditto: $DITTO${DITTO_B:+ (A), $DITTO_B (B)}; delay ${DELAY_MS} ms; budget $MAX_PAGES pages; per-address: ${PER_IP_ARGS:-default}${CRAWL_ARGS:+; more flags: $CRAWL_ARGS}"
for round in $(seq "$ROUNDS"); do
    for n in $SIZES; do
        for focus in $FOCI; do
          for bin in $BINARIES; do
            exe=$DITTO
            [ "$bin" = A ] || exe=$DITTO_B
            run="$WORK/run-$n-$focus-$round$bin"
            rm -rf "$run" && mkdir -p "$run"
            rm -f "$N/access.log" "$N/nginx.pid"
            write_conf "$WORK/web-$n/hosts"
            nginx -c "$N/nginx.conf" -p "$N" 2>/dev/null
            for _ in $(seq 100); do [ -s "$N/nginx.pid" ] && break; sleep 0.05; done
            NGINX_PID=$(cat "$N/nginx.pid")
            load=$(cut -d' ' -f1-3 /proc/loadavg)
            start=$(date +%s.%N)
            # shellcheck disable=SC2086 # PER_IP_ARGS and CRAWL_ARGS are lists of flags
            /usr/bin/time -f "%U %S %M %e" -o "$run/time" "$exe" crawl --config "$WORK/web-$n/resolve-$PORT.toml" \
                --store "$run/crawl.db" --labelset "$WORK/wiki.dls" --seeds "$WORK/web-$n/seeds.txt" \
                --scope any --min-delay-ms "$DELAY_MS" --focus "$focus" --threads "$THREADS" --progress none \
                --max-pages "$MAX_PAGES" --failure-log "$run/failures.jsonl" --stats-json "$run/stats.json" \
                $PER_IP_ARGS $CRAWL_ARGS --user-agent "ditto-crawl-bench/0.1 (+http://localhost/)" >/dev/null 2>"$run/crawl.err" \
                || { echo "crawl failed, see $run/crawl.err" >&2; exit 1; }
            stop_nginx
            rm -rf "$run/crawl.db"
            python3 - "$N/access.log" "$run" "$start" "$DELAY_MS" "$n" "$focus" "$round" "$load" "$RESULTS" \
                "$PER_IP_ARGS" "$bin" <<'PY'
import collections, json, shutil, sys
log, run, start, delay, n, focus, rnd, load, results, per_ip_args, binary = sys.argv[1:]
start, delay = float(start), float(delay)
# The per-address bound in force: the flags given, else the crawler's defaults.
flags = per_ip_args.split()
def flag(name, default):
    return float(flags[flags.index(name) + 1]) if name in flags else default
ip_in_flight = flag("--per-ip-in-flight", 8)
ip_gap = flag("--per-ip-min-delay-ms", delay / 10)
user, sys_, rss_kb, wall = open(f"{run}/time").read().split()[:4]
cpu_s = float(user) + float(sys_)
stats = json.load(open(f"{run}/stats.json"))["crawl"]
pages = stats["pages"]
rows = []
for line in open(log):
    p = line.split()
    if len(p) == 6:
        end, rt = float(p[0]), float(p[5])
        rows.append((end - rt, end, p[1], p[2], p[3], p[4]))
def per_host(rows):
    close = overlap = 0
    by = collections.defaultdict(list)
    for r in rows:
        by[r[3]].append(r)
    for reqs in by.values():
        reqs.sort()
        for a, b in zip(reqs, reqs[1:]):
            close += (b[0] - a[1]) * 1000 < delay - 1
            overlap += b[0] < a[1] - 0.001
    return close, overlap, len(by)
def per_addr(rows):
    by = collections.defaultdict(list)
    for r in rows:
        by[r[2]].append(r)
    most = close = dense = 0
    # nginx stamps a request with its event loop's clock (1 ms, cached per loop turn): two
    # requests spaced by the gap can show closer. So besides single close pairs, the rate:
    # windows of 100 ms (each starting at a request) holding more starts than the gap allows
    # in 102 ms (each end's stamp may be 1 ms off, as the per-host check allows 1 ms):
    # 102/gap + 1, rounded down.
    per_window = int(102 / ip_gap) + 1 if ip_gap > 0 else float("inf")
    window_most = 0
    for reqs in by.values():
        reqs.sort()
        starts = [r[0] for r in reqs]
        close += sum((b - a) * 1000 < ip_gap - 1 for a, b in zip(starts, starts[1:]))
        j = 0
        for i, t in enumerate(starts):
            while starts[j] < t - 0.1 + 1e-9:
                j += 1
            dense += i - j + 1 > per_window
            window_most = max(window_most, i - j + 1)
        ev = sorted([(r[0], 1) for r in reqs] + [(r[1], -1) for r in reqs], key=lambda e: (e[0], -e[1]))
        cur = 0
        for _, d in ev:
            cur += d
            most = max(most, cur)
    return most, close, dense, len(by), window_most, per_window
h_close, h_overlap, hosts = per_host(rows)
a_most, a_close, a_dense, addrs, a_window_most, a_per_window = per_addr(rows)
fails = collections.Counter()
sample = {}
for line in open(f"{run}/failures.jsonl"):
    f = json.loads(line)
    fails[f["event"]] += 1
    sample.setdefault(f["event"], f["reason"])
fail_txt = ", ".join(f"{e} {c} ({sample[e][:90]!r})" for e, c in fails.most_common()) or "none"
# Failures of the crawler's own connection handling: fetch errors, unavailable robots.txt,
# given-up and retired URLs (this web answers every page; sitemaps it lacks are 404s).
conn_fails = sum(c for e, c in fails.items() if e.startswith(("error_", "robots_unavailable", "retries_", "retired_", "host_retired")))
ms = cpu_s * 1000 / pages if pages else float("nan")
print(f"round {rnd} binary {binary} hosts {n} focus {focus}: {pages} pages, {stats['requests']} requests "
      f"({stats['robots_fetches']} robots.txt) to {hosts} hosts, stopped by {stats.get('stopped_by')}; "
      f"CPU {cpu_s:.2f} s = {ms:.3f} ms/page; peak RSS {int(rss_kb) / 1024:.0f} MiB; wall {float(wall):.1f} s; "
      f"failure log: {sum(fails.values())} lines, {conn_fails} of connection handling: {fail_txt}; "
      f"politeness per host: {h_close} closer than {delay:.0f} ms, {h_overlap} two in flight; per address "
      f"({addrs} addresses, bound {ip_in_flight:.0f} at once, {ip_gap:g} ms apart): at most {a_most} at once, "
      f"at most {a_window_most} starts in 100 ms (allowed {a_per_window}), {a_dense} 100-ms windows over "
      f"the rate, {a_close} starts closer than {ip_gap - 1:g} ms in the log; "
      f"load average {load}", flush=True)
if a_most > ip_in_flight:
    # Kept for a look: the count is taken from 1-ms stamps with no allowance for rounding.
    shutil.copy(log, f"{run}/access.log")
    print(f"  more than {ip_in_flight:.0f} at once at an address: nginx's log kept as {run}/access.log", flush=True)
with open(results, "a") as out:
    out.write(f"{n}\t{focus}\t{rnd}\t{pages}\t{ms:.4f}\t{int(rss_kb)}\t{float(wall):.2f}\t{conn_fails}\t"
              f"{h_close + h_overlap}\t{a_dense}\t{a_close}\t{a_most}\t{stats['requests']}\t{binary}\n")
PY
          done
        done
    done
done
echo "medians over $ROUNDS rounds (uptime: $(uptime)):"
python3 - "$RESULTS" <<'PY'
import collections, statistics, sys
by = collections.defaultdict(list)
for line in open(sys.argv[1]):
    (n, focus, rnd, pages, ms, rss, wall, fails, host_v, addr_dense, addr_close, addr_most, requests,
     binary) = line.rstrip("\n").split("\t")
    by[(int(n), focus, binary)].append((float(ms), int(rss), float(wall), int(pages), int(fails), int(host_v),
                                        int(addr_dense), int(addr_close), int(addr_most), int(requests)))
print("| hosts | focus | binary | pages | requests per page | CPU ms/page (median) | all rounds | B / A | "
      "peak RSS MiB (median) | wall s (median) | connection failures | per-host violations | "
      "per-address: 100-ms windows over the rate | starts closer than the gap less 1 ms in nginx's log | "
      "most in flight |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for (n, focus, binary), v in sorted(by.items()):
    col = list(zip(*v))
    med = statistics.median(col[0])
    a = by.get((n, focus, "A"))
    ratio = f"{med / statistics.median(list(zip(*a))[0]):.3f}" if binary == "B" and a else ""
    print(f"| {n:,} | {focus} | {binary} | {statistics.median(col[3]):,.0f} | "
          f"{statistics.median(col[9]) / max(statistics.median(col[3]), 1):.2f} | {med:.3f} | "
          f"{', '.join(f'{x:.3f}' for x in col[0])} | {ratio} | {statistics.median(col[1]) / 1024:.0f} | "
          f"{statistics.median(col[2]):.1f} | {sum(col[4])} | {sum(col[5])} | {sum(col[6])} | {sum(col[7])} | "
          f"{max(col[8])} |")
PY
