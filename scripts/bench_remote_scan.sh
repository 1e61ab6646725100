#!/usr/bin/env bash
# `ditto scan` of the shared WARC files from local disk vs over loopback HTTP served by nginx
# (Debian's nginx-light), interleaved, best of N. Prints MB/s of compressed input and checks
# that both stores hold the same chunk occurrences.
# Usage: scripts/bench_remote_scan.sh [RUNS]   (needs target/release/ditto and nginx)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
DITTO=$PWD/target/release/ditto
DATA=$(cd ../shared/data && pwd)
W=$(mktemp -d)
trap 'kill $(cat $W/nginx.pid 2>/dev/null) 2>/dev/null || true; rm -rf $W' EXIT
mkdir -p $W/www $W/logs
for f in $DATA/warc/big/debian-docs-html.warc.gz $DATA/warc/valid/*/*.warc.gz; do
  cp "$f" "$W/www/$(basename $(dirname $f))-$(basename $f)"
done
PORT=$((20000 + RANDOM % 20000))
cat > $W/nginx.conf <<CONF
worker_processes 1;
pid $W/nginx.pid;
error_log $W/logs/error.log;
events { worker_connections 64; }
http {
  access_log $W/logs/access.log;
  sendfile on;
  server { listen 127.0.0.1:$PORT; root $W/www; }
}
CONF
chmod -R a+rX $W
nginx -c $W/nginx.conf -p $W
sleep 0.3
ls $W/www > $W/list.txt
BYTES=$(cat $W/www/* | wc -c)
$DITTO labelset build --name w --min-chars 100 -o $W/w.dls $DATA/wikipedia/articles >/dev/null 2>&1
run() { # name inputs...
  local name=$1; shift
  rm -rf $W/$name.db
  local t0=$(date +%s.%N)
  $DITTO scan --store $W/$name.db --labelset $W/w.dls --progress none "$@" 2>/dev/null
  local t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}
best_local=999; best_http=999
for i in $(seq $RUNS); do
  l=$(run local --threads 2 $W/www/*)
  h=$(run http --threads 2 --input-list $W/list.txt --base-url http://127.0.0.1:$PORT/)
  echo "run $i: local ${l}s, http ${h}s"
  best_local=$(echo "if ($l < $best_local) $l else $best_local" | bc)
  best_http=$(echo "if ($h < $best_http) $h else $best_http" | bc)
done
$DITTO export chunks --store $W/local.db --output $W/l.csv
$DITTO export chunks --store $W/http.db --output $W/h.csv
if cmp -s $W/l.csv $W/h.csv; then same=yes; else same=NO; fi
echo "input: $(ls $W/www | wc -l) WARC files, $BYTES bytes; requests in nginx's log: $(wc -l < $W/logs/access.log)"
printf "local disk:    best %.3f s  %.1f MB/s\n" $best_local $(echo "$BYTES / $best_local / 1000000" | bc -l)
printf "loopback HTTP: best %.3f s  %.1f MB/s\n" $best_http $(echo "$BYTES / $best_http / 1000000" | bc -l)
echo "same chunk occurrences in both stores: $same ($(wc -l < $W/l.csv) rows)"
