#!/usr/bin/env bash
# The damaged-store table (issue 26 item 4, issue 22 item 4): stores built from the shared
# data, every file of each truncated or overwritten (8 bytes) at 10/50/90 % of its length,
# then `ditto stats`, `ditto report`, `ditto store check` and `ditto scan` on each damaged
# copy. Every run is classified:
#   error   exit 1 with "error: …"
#   same    exit 0 with the undamaged store's answer (the damage missed what it reads)
#   silent  exit 0 with another answer (less or nothing): a silent wrong result
#   panic   exit 101 or "panicked" on stderr
#   signal  killed by a signal (abort, out of memory)
#   hang    still running after 120 s
# Prints one line per store and command and the totals; exits 1 unless there are 0 panics,
# 0 signals, 0 hangs and 0 silent results.
#
#   scripts/store_damage_table.sh [DITTO] [WORKDIR]
# DITTO defaults to target/release/ditto, WORKDIR to a new temporary directory (removed).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
ditto=${1:-$here/target/release/ditto}
ditto=$(cd "$(dirname "$ditto")" && pwd)/$(basename "$ditto")
data=$here/../shared/data
work=${2:-$(mktemp -d)}
[ -n "${2:-}" ] || trap 'rm -rf "$work"' EXIT
mkdir -p "$work"
cd "$work" || exit 2

"$ditto" labelset build --name wikipedia --min-chars 100 -o w.dls "$data/wikipedia/articles" >/dev/null 2>&1 \
  || { echo "cannot build the label set" >&2; exit 2; }

# name  inputs (relative to the shared data), scanned into one store in order
stores=(
  "faq reuse/site/debian-faq.en.docs.test"
  "mirror reuse/site/archive-mirror.docs.test"
  "articles wikipedia/articles"
  "reuse reuse/site"
  "debian warc/big/debian-docs-html.warc.gz"
  "two-scans reuse/site/clang-15.docs.test reuse/site/clang-16.docs.test"
)

scan_args() { # store inputs...
  local db=$1; shift
  local a=(scan --store "$db" --labelset w.dls --progress none --threads 1)
  for i in "$@"; do a+=("$data/$i"); done
  printf '%s\n' "${a[@]}"
}

answer() { # command stdout stderr -> the part compared with the undamaged store's
  case $1 in
    stats) grep -v '"size_on_disk_bytes"' "$2" ;;
    check) grep -v '^checked in' "$2" ;;
    scan) cat "$2" "$3" | grep '^store: ' ;;
    *) cat "$2" ;;
  esac
}

run_cmd() { # command db inputs... -> writes out.txt err.txt, returns rc
  local cmd=$1 db=$2; shift 2
  local args
  case $cmd in
    stats) args=(stats --store "$db" --json) ;;
    report) args=(report --store "$db" --format jsonl --level page) ;;
    check) args=(store check --store "$db") ;;
    scan) mapfile -t args < <(scan_args "$db" "$@") ;;
  esac
  timeout 120 "$ditto" "${args[@]}" >out.txt 2>err.txt
}

commands=(stats report check scan)
declare -A total
printf '%-10s %-7s %5s %6s %5s %6s %5s %6s %4s\n' store command runs error same silent panic signal hang
for entry in "${stores[@]}"; do
  read -r name inputs <<<"$entry"
  # shellcheck disable=SC2086
  for i in $inputs; do
    mapfile -t a < <(scan_args "$name.db" "$i")
    "$ditto" "${a[@]}" >/dev/null 2>&1 || { echo "scan of $i failed" >&2; exit 2; }
  done
  declare -A ref=()
  for cmd in "${commands[@]}"; do
    rm -rf ref.db && cp -r "$name.db" ref.db
    # shellcheck disable=SC2086
    run_cmd "$cmd" ref.db $inputs || { echo "$cmd on the undamaged $name store failed" >&2; exit 2; }
    ref[$cmd]=$(answer "$cmd" out.txt err.txt | sha1sum)
  done
  declare -A count=()
  files=$(cd "$name.db" && find . -type f -size +0 | sort)
  for f in $files; do
    size=$(stat -c %s "$name.db/$f")
    for pct in 10 50 90; do
      off=$((size * pct / 100))
      for how in truncate overwrite; do
        for cmd in "${commands[@]}"; do
          rm -rf d.db && cp -r "$name.db" d.db
          if [ $how = truncate ]; then
            truncate -s "$off" "d.db/$f"
          else
            [ $((off + 8)) -le "$size" ] || off=$((size > 8 ? size - 8 : 0))
            printf '\377\000\377\000\377\000\377\000' | dd of="d.db/$f" bs=1 seek="$off" conv=notrunc 2>/dev/null
          fi
          # shellcheck disable=SC2086
          run_cmd "$cmd" d.db $inputs
          rc=$?
          if [ $rc = 124 ]; then k=hang
          elif [ $rc = 101 ] || grep -q panicked err.txt; then k=panic
          elif [ $rc -gt 128 ]; then k=signal
          elif [ $rc = 0 ] && [ "$(answer "$cmd" out.txt err.txt | sha1sum)" = "${ref[$cmd]}" ]; then k=same
          elif [ $rc = 0 ]; then k=silent
          elif [ $rc = 1 ] && grep -q '^error: ' err.txt; then k=error
          else k=signal
          fi
          if [ $k != error ] && [ $k != same ]; then
            echo "  $name $f $how at $pct %: $cmd: $k (exit $rc): $(head -c 300 err.txt | tr '\n' ' ')" >&2
          fi
          count[$cmd,$k]=$(( ${count[$cmd,$k]:-0} + 1 ))
          count[$cmd,runs]=$(( ${count[$cmd,runs]:-0} + 1 ))
        done
      done
    done
  done
  for cmd in "${commands[@]}"; do
    printf '%-10s %-7s' "$name" "$cmd"
    for k in runs error same silent panic signal hang; do
      v=${count[$cmd,$k]:-0}
      printf ' %5s' "$v"
      total[$cmd,$k]=$(( ${total[$cmd,$k]:-0} + v ))
      total[all,$k]=$(( ${total[all,$k]:-0} + v ))
    done
    echo
  done
  unset count ref
  rm -rf "$name.db"
done
for cmd in "${commands[@]}" all; do
  printf '%-10s %-7s' total "$cmd"
  for k in runs error same silent panic signal hang; do printf ' %5s' "${total[$cmd,$k]:-0}"; done
  echo
done
bad=$(( ${total[all,silent]:-0} + ${total[all,panic]:-0} + ${total[all,signal]:-0} + ${total[all,hang]:-0} ))
[ "$bad" = 0 ]
