#!/usr/bin/env bash
# moat against the reference MCP servers, side by side, in one run.
#
#   bench/peers.sh                          # the whole comparison (about 4 minutes)
#   ROUNDS=3 BATCH_SECS=0.5 bench/peers.sh  # a quicker, noisier one
#   bench/peers.sh --moat-env MOAT_SANDBOX__WORKERS=2   # extra arguments go to peer-bench
#   QUICK=1 bench/peers.sh --moat-alt before=OLD/moat   # the regression guard: every
#       measure beside an earlier build, in a few minutes, with a table of ratios
#
# Installs, from the package registries only and pinned, into $BENCH_CACHE
# (default ~/.cache/moat-bench; idempotent, a second run only checks):
#   npm   @modelcontextprotocol/server-filesystem 2026.8.31  (Node, the machine's `node`)
#   PyPI  mcp-server-git 2026.10.19                           (in a virtualenv)
# generates the workspace once (a 50 KB source file, a 100-entry directory, a
# git history of 1,000 commits), builds moat and the bench crate (release),
# and runs bench/peers (`peer-bench`), which prints the tables: stdio
# read_file and list_directory (sequential and 8 in flight), git_log, cold
# start, memory, HTTP at the connection limit, and a null server measured with
# the same client as the floor. See bench/README.md, "Peers".
#
# Knobs (environment): MOAT_BIN, QUICK, ROUNDS (5), BATCH_SECS (1.0), COLD_RUNS (15),
# HTTP_SECS (3), CONNECTIONS (64), BENCH_CACHE. Traffic stays on 127.0.0.1;
# every loop is bounded in time.
set -euo pipefail
cd "$(dirname "$0")/.."

GIT_VERSION=2026.10.19
CACHE="${BENCH_CACHE:-$HOME/.cache/moat-bench}"
# QUICK=1: fewer and shorter rounds (noisier; a guard, not a record).
if [ -n "${QUICK:-}" ]; then
    ROUNDS="${ROUNDS:-3}" BATCH_SECS="${BATCH_SECS:-0.5}" COLD_RUNS="${COLD_RUNS:-7}" HTTP_SECS="${HTTP_SECS:-1.5}"
fi
ROUNDS="${ROUNDS:-5}"
BATCH_SECS="${BATCH_SECS:-1.0}"
COLD_RUNS="${COLD_RUNS:-15}"
HTTP_SECS="${HTTP_SECS:-3}"
CONNECTIONS="${CONNECTIONS:-64}"

log() { printf '[bench] %s\n' "$*" >&2; }

command -v node >/dev/null || { log "node and npm are needed (Debian: apt-get install nodejs npm)"; exit 2; }
command -v python3 >/dev/null || { log "python3 (3.10 or later) is needed"; exit 2; }
command -v git >/dev/null || { log "git is needed"; exit 2; }
mkdir -p "$CACHE"

. bench/server-filesystem.sh

GIT_DIR_="$CACHE/mcp-server-git-$GIT_VERSION"
GIT_BIN="$GIT_DIR_/bin/mcp-server-git"
if [ ! -f "$GIT_DIR_/.installed" ]; then
    log "installing mcp-server-git==$GIT_VERSION (PyPI, virtualenv)"
    rm -rf "$GIT_DIR_"
    python3 -m venv "$GIT_DIR_"
    "$GIT_DIR_/bin/pip" install --quiet --disable-pip-version-check "mcp-server-git==$GIT_VERSION" >&2
    [ -x "$GIT_BIN" ] || { log "mcp-server-git installed without $GIT_BIN"; exit 1; }
    touch "$GIT_DIR_/.installed"
fi

log "building moat and the bench crate (release)"
# Two builds: `--bin moat` would apply to moat-bench too and build neither of its binaries.
# MOAT_BIN=PATH measures that moat binary instead of building this checkout's.
if [ -n "${MOAT_BIN:-}" ]; then
    MOAT="$MOAT_BIN"
else
    cargo build --release --locked --quiet -p moat-broker --bin moat
    MOAT="$PWD/target/release/moat"
fi
cargo build --release --locked --quiet -p moat-bench

log "node $(node --version), $("$GIT_DIR_/bin/python" --version), $(git --version), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
# The 50 KB file is cut from real Rust source: the worker's symbol parsers.
exec "$PWD/target/release/peer-bench" \
    --cache "$CACHE" \
    $(for f in worker/src/symbols/mod.rs worker/src/symbols/treesitter/mod.rs worker/src/symbols/treesitter/ecmascript.rs; do printf -- '--source %s ' "$f"; done) \
    --moat "$MOAT" \
    --null "$PWD/target/release/null-server" \
    --node "$(command -v node)" \
    --fs-server "$FS_JS" \
    --git-server "$GIT_BIN" \
    --rounds "$ROUNDS" --batch-secs "$BATCH_SECS" --cold "$COLD_RUNS" \
    --http-secs "$HTTP_SECS" --connections "$CONNECTIONS" \
    "$@"
