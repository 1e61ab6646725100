#!/usr/bin/env bash
# CPU per page of `ditto scan --threads 1` with passage matching (issue 36) against the
# exact-only scan: today's default (`--match passage`), `--match exact` of the same binary, and
# an earlier binary (exact only), alternating, pinned to one core, on the Debian docs WARC and
# on 2,410 text-heavy pages (10 copies of the shared Wikipedia articles).
#
#   scripts/bench_passage_cost.sh NEW_DITTO OLD_DITTO [ROUNDS]
#
# Prints, per input and variant, user+sys CPU seconds of each round and the best per page.
set -euo pipefail
NEW=${1:?new ditto binary}
OLD=${2:?earlier ditto binary}
ROUNDS=${3:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA="$ROOT/../shared/data"
W=$(mktemp -d /tmp/passage-cost.XXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/text"
for i in $(seq 0 9); do cp -r "$DATA/wikipedia/articles" "$W/text/c$i"; done
"$NEW" labelset build -q --name wikipedia --min-chars 100 -o "$W/new.dls" "$DATA/wikipedia/articles" >/dev/null 2>&1
"$OLD" labelset build -q --name wikipedia --min-chars 100 -o "$W/old.dls" "$DATA/wikipedia/articles" >/dev/null 2>&1
cpu() { # cpu BIN DLS INPUT [flags...]: user+sys seconds of one scan into a fresh store
  local bin=$1 dls=$2 input=$3; shift 3
  rm -rf "$W/store"
  /usr/bin/time -f "%U %S" -o "$W/t" taskset -c 1 "$bin" scan -q --threads 1 --progress none \
    --store "$W/store" --labelset "$dls" --url-prefix http://h/ "$@" "$input" >/dev/null 2>&1
  awk '{printf "%.3f", $1 + $2}' "$W/t"
}
for input in "$DATA/warc/big/debian-docs-html.warc.gz:1388" "$W/text:2410"; do
  path=${input%:*}; pages=${input##*:}
  declare -A best=()
  for v in passage exact old; do best[$v]=999; done
  for r in $(seq 1 "$ROUNDS"); do
    for v in passage exact old; do
      case $v in
        passage) s=$(cpu "$NEW" "$W/new.dls" "$path") ;;
        exact) s=$(cpu "$NEW" "$W/new.dls" "$path" --match exact) ;;
        old) s=$(cpu "$OLD" "$W/old.dls" "$path") ;;
      esac
      echo "$(basename "$path") round $r $v: $s s"
      best[$v]=$(awk -v a="${best[$v]}" -v b="$s" 'BEGIN{print (b < a) ? b : a}')
    done
  done
  for v in passage exact old; do
    awk -v v=$v -v s="${best[$v]}" -v n=$pages -v o="${best[old]}" -v f="$(basename "$path")" \
      'BEGIN{printf "%s %-8s best %.3f s, %.3f ms/page, %.3f x the earlier binary\n", f, v, s, 1000*s/n, s/o}'
  done
done
