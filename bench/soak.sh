#!/usr/bin/env bash
# Soak run: thousands of mixed requests over stdio AND HTTP at the concurrency
# limit for several minutes, workers SIGKILLed at random, heavy searches past
# a lowered tool timeout. Pass criteria (printed; exit 1 if one fails): every
# request answered exactly once, no lingering zombie, broker fds and RSS flat
# (first vs last minute), both brokers exit 0 and leave no worker behind.
# Then the attacks (each on a fresh broker with default limits, each held
# --attack-seconds, 10 s by default, bounded in count): HTTP clients that
# never read their answers, stalled request bodies, slot-filling slow calls
# over HTTP and over stdio, a flood of blank lines over stdio, while a prober
# pings over the same transport. Printed per attack: ping p50/p99/max (goal
# p99 < 50 ms), broker RSS (and per non-reading connection), recovery time.
# The driver is bench/soak.py (Python standard library); see its docstring.
#
#   bench/soak.sh                          # 180 s
#   SOAK_DURATION=600 bench/soak.sh
#   bench/soak.sh --kill-every 0.2 --http-limit 32     # driver options
#   bench/soak.sh --attacks only                       # just the attacks
#   bench/soak.sh --attacks none                       # just the soak
#
#   SOAK_DURATION   seconds of load (default 180)
#   SOAK_DIR        scratch directory (default: a fresh one under /tmp,
#                   removed afterwards unless the run fails)
#
# Traffic goes to 127.0.0.1 only; the run stops by itself.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "building moat (release)" >&2
cargo build --release --locked --quiet -p moat-broker --bin moat

dir="${SOAK_DIR:-$(mktemp -d -t moat-soak.XXXXXX)}"
mkdir -p "$dir"
status=0
python3 bench/soak.py --moat target/release/moat --dir "$dir" \
    --duration "${SOAK_DURATION:-180}" "$@" || status=$?
if [ "$status" -eq 0 ] && [ -z "${SOAK_DIR:-}" ]; then
    rm -rf "$dir"
else
    echo "soak: logs and workspace kept in $dir" >&2
fi
exit "$status"
