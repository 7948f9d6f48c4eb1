#!/usr/bin/env bash
# The exposition of /metrics, parsed by the official Prometheus Python client
# (tests/judges/metrics_parse.py), in a venv of its own under target/.
#
#   tests/judges/metrics.sh            # uses target/debug/moat (built if missing)
#   MOAT_BIN=path/to/moat tests/judges/metrics.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${MOAT_BIN:-$PWD/target/debug/moat}
[[ -x "$BIN" ]] || cargo build -p moat-broker --quiet
VENV=target/metrics-judge-venv
PROMETHEUS_CLIENT=0.26.0
if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('prometheus_client') != '$PROMETHEUS_CLIENT')" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "prometheus_client==$PROMETHEUS_CLIENT"
fi
"$VENV/bin/python" tests/judges/metrics_parse.py "$BIN"
