#!/usr/bin/env bash
# Runs the "## Use" section of docs/GUIDE.md as a new user would, line by line: every command
# line of its ```sh blocks (a line ending in `\` joined with the next), in order, in one fresh
# directory where `../shared/data` is the shared data, with the release `ditto` first on
# PATH. Stops at the first line that fails, printing it and its exit code. Before running,
# it checks that every command line of README.md's "## A short tour" is a line of the guide's
# Use section (so the tour runs too, as part of the guide).
#
#   scripts/readme_walkthrough.sh              # builds target/release/ditto first
#   DATA=/path/to/shared/data DITTO=/path/to/ditto scripts/readme_walkthrough.sh
#
# The convention (the guide keeps it): a line whose comment says "needs the network" is not
# run (it is listed with its reason); every other line must run offline. Network use is
# loopback only.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
GUIDE=${GUIDE:-$ROOT/docs/GUIDE.md}
README=${README:-$ROOT/README.md}
DATA=${DATA:-$ROOT/../shared/data}
if [ ! -d "$DATA/wikipedia/articles" ]; then
    echo "readme_walkthrough: no shared data at $DATA (give DATA=path/to/shared/data)" >&2
    exit 2
fi
DATA=$(cd "$DATA" && pwd)
if [ -z "${DITTO:-}" ]; then
    (cd "$ROOT" && cargo build --release --quiet --bin ditto)
    target=${CARGO_TARGET_DIR:-target}
    case "$target" in /*) ;; *) target=$ROOT/$target ;; esac
    DITTO=$target/release/ditto
fi
DITTO=$(cd "$(dirname "$DITTO")" && pwd)/$(basename "$DITTO")

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ditto-readme.XXXXXX")
cleanup() { rm -rf "$WORK"; }
[ -n "${KEEP:-}" ] || trap cleanup EXIT
mkdir -p "$WORK/shared" "$WORK/run" "$WORK/bin"
ln -s "$DATA" "$WORK/shared/data"
ln -s "$DITTO" "$WORK/bin/ditto"

# The command lines of a section's sh blocks, continuation lines joined, one a line.
section_lines() { # FILE "## Heading"
    awk -v want="$2" '
        /^## / { in_sec = ($0 == want) }
        in_sec && /^```sh$/ { in_sh = 1; next }
        in_sh && /^```/ { in_sh = 0; next }
        in_sec && in_sh {
            line = $0
            if (line ~ /\\[[:space:]]*$/) { sub(/\\[[:space:]]*$/, "", line); held = held line; next }
            line = held line; held = ""
            if (line ~ /^[[:space:]]*(#|$)/) next
            print line
        }' "$1"
}
LINES=$(section_lines "$GUIDE" "## Use")
if [ "$(printf '%s\n' "$LINES" | grep -c .)" -lt 5 ]; then
    echo "readme_walkthrough: found no command lines in the Use section of $GUIDE" >&2
    exit 1
fi
TOUR=$(section_lines "$README" "## A short tour")
if [ "$(printf '%s\n' "$TOUR" | grep -c .)" -lt 3 ]; then
    echo "readme_walkthrough: found no command lines in the short tour of $README" >&2
    exit 1
fi
# Compared without comments and with runs of blanks as one space.
norm() { sed -e 's/[[:space:]]#.*$//' -e 's/[[:space:]][[:space:]]*/ /g' -e 's/ $//'; }
GUIDE_NORM=$(norm <<<"$LINES")
while IFS= read -r line; do
    if ! grep -qxF -- "$(norm <<<"$line")" <<<"$GUIDE_NORM"; then
        echo "readme_walkthrough: README's tour line is not in the guide's Use section: $line" >&2
        exit 1
    fi
done <<<"$TOUR"
echo "readme_walkthrough: README's $(printf '%s\n' "$TOUR" | grep -c .) tour lines are all in the guide's Use section"

ran=0
skipped=0
while IFS= read -r line; do
    if [[ "$line" == *"needs the network"* ]]; then
        echo "not run (${line##*# }): ${line%%#*}"
        skipped=$((skipped + 1))
        continue
    fi
    echo "+ $line"
    set +e
    (cd "$WORK/run" && env -u DITTO_STORE -u DITTO_LABELSET -u DITTO_USER_AGENT PATH="$WORK/bin:$PATH" \
        bash -o pipefail -c "$line" </dev/null)
    rc=$?
    set -e
    if [ $rc -ne 0 ]; then
        echo "readme_walkthrough: FAILED (exit $rc): $line" >&2
        exit 1
    fi
    ran=$((ran + 1))
done <<<"$LINES"
echo "readme_walkthrough: $ran lines run, $skipped not run (they need the network), in $WORK/run"
