#!/usr/bin/env bash
# Network soak of the HTTP edge: every attack class the edge bounds, all at
# once, against one broker with default settings (OAuth, metrics listener,
# audit file), beside valid callers, the probes and a scraper. Reports the
# valid callers' p50/p99/max, the probes and scrapes answered, the broker's
# RSS (sampled and peak) and fds, its workers, and the audit trail's
# completeness; exit 1 if a goal is missed (valid p99 < 100 ms, every probe
# answered, RSS < 128 MiB, no audit event lost, fds and workers back to idle).
# The driver is bench/edge_soak.py (Python standard library and openssl).
#
#   bench/edge-soak.sh                       # 60 s, the release binary
#   EDGE_SOAK_DURATION=180 bench/edge-soak.sh
#   bench/edge-soak.sh --moat-alt OLD_BINARY # the same run against another binary
#
#   EDGE_SOAK_DIR   scratch directory (default: a fresh one under /tmp,
#                   removed afterwards unless the run fails)
#
# Traffic goes to 127.0.0.1 only; the run stops by itself.
set -euo pipefail
cd "$(dirname "$0")/.."

moat=target/release/moat
if [ "${1:-}" = "--moat-alt" ]; then
    moat="$2"
    shift 2
else
    echo "building moat (release)" >&2
    cargo build --release --locked --quiet -p moat-broker --bin moat
fi
dir="${EDGE_SOAK_DIR:-$(mktemp -d -t moat-edge-soak.XXXXXX)}"
mkdir -p "$dir"
status=0
python3 bench/edge_soak.py --moat "$(realpath "$moat")" --dir "$dir" \
    --duration "${EDGE_SOAK_DURATION:-60}" "$@" || status=$?
if [ "$status" -eq 0 ] && [ -z "${EDGE_SOAK_DIR:-}" ]; then
    rm -rf "$dir"
else
    echo "edge soak: logs and workspace kept in $dir" >&2
fi
exit "$status"
