#!/usr/bin/env bash
# HTTP load run: `moat serve --transport http` (release build, confined
# workers) on an ephemeral port of 127.0.0.1 with a bearer token, driven by
# wrk at the connection limit with one small `tools/call` (read_file of a
# 2 KB file, 2026-07-28 headers) for DURATION seconds. Prints requests/s,
# p50/p99 latency and the error count, which must be zero (exit 1 if not).
#
#   bench/http-load.sh                    # 64 connections, 20 s
#   CONNECTIONS=128 DURATION=30 bench/http-load.sh
#   TOOL=list_directory bench/http-load.sh
#
# wrk comes from Debian (`apt-get install wrk`, done here when missing and
# running as root). Traffic goes to 127.0.0.1 only; the run is bounded by
# DURATION and stops by itself.
set -euo pipefail
cd "$(dirname "$0")/.."

CONNECTIONS="${CONNECTIONS:-64}"   # also http.max_connections and http.max_in_flight
DURATION="${DURATION:-20}"         # seconds of measured load
THREADS="${THREADS:-2}"            # wrk threads (the machine has 2 cores)
WORKERS="${WORKERS:-4}"            # sandbox.workers (confined worker pool)
TOOL="${TOOL:-read_file}"          # read_file or list_directory
LOG_LEVEL="${LOG_LEVEL:-info}"     # the broker's log level (info logs every request)

need_wrk() {
    command -v wrk >/dev/null 2>&1 && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing wrk from Debian" >&2
        apt-get install -y -qq wrk >/dev/null 2>&1 || {
            apt-get update -qq >/dev/null 2>&1
            apt-get install -y -qq wrk >/dev/null
        }
    fi
    command -v wrk >/dev/null 2>&1 || {
        echo "wrk is needed: apt-get install wrk" >&2
        exit 2
    }
}
need_wrk

echo "building moat (release)" >&2
cargo build --release --locked --quiet -p moat-broker --bin moat
MOAT="$PWD/target/release/moat"

WORK="$(mktemp -d -t moat-http-load.XXXXXX)"
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

mkdir -p "$WORK/ws/src"
# A small source file (about 2 KB, 60 lines).
for i in $(seq 1 60); do
    printf 'fn line_%02d() -> u32 { %d } // a small file for the load run\n' "$i" "$i"
done >"$WORK/ws/src/small.rs"
printf '# load-run workspace\n' >"$WORK/ws/README.md"

TOKEN="load-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
case "$TOOL" in
    read_file) ARGS='{"path":"src/small.rs"}' ;;
    list_directory) ARGS='{"path":"src"}' ;;
    *) echo "TOOL must be read_file or list_directory" >&2; exit 2 ;;
esac
BODY='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"'"$TOOL"'","arguments":'"$ARGS"',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"0"}}}}'

env -i PATH="$PATH" HOME="$WORK" \
    MOAT_HTTP__PORT=0 \
    MOAT_HTTP__BEARER_TOKEN="$TOKEN" \
    MOAT_HTTP__MAX_CONNECTIONS="$CONNECTIONS" \
    MOAT_HTTP__MAX_IN_FLIGHT="$CONNECTIONS" \
    MOAT_SANDBOX__WORKERS="$WORKERS" \
    MOAT_OBSERVABILITY__LOG_LEVEL="$LOG_LEVEL" \
    "$MOAT" serve --transport http --workspace "$WORK/ws" 2>"$WORK/moat.log" &
SERVER_PID=$!

ADDR=""
for _ in $(seq 1 200); do
    ADDR="$(sed -n 's/.*"message":"http.listening".*"addr":"\([^"]*\)".*/\1/p' "$WORK/moat.log" | head -1)"
    [ -n "$ADDR" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/moat.log" >&2; exit 1; }
    sleep 0.05
done
[ -n "$ADDR" ] || { echo "no http.listening in the log" >&2; cat "$WORK/moat.log" >&2; exit 1; }

# One request by hand first: the body is right and the answer is a success.
FIRST="$(curl -s -o - -w ' HTTP %{http_code}' -X POST "http://$ADDR/mcp" \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H "Mcp-Name: $TOOL" \
    --data "$BODY" 2>/dev/null || true)"
case "$FIRST" in
    *'"isError":false'*' HTTP 200') ;;
    *) echo "the probe request failed: $FIRST" >&2; exit 1 ;;
esac

cat >"$WORK/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $TOKEN"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "$TOOL"

local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) non200 = 0; tool_errors = 0 end
function response(status, headers, body)
    if status ~= 200 then
        non200 = non200 + 1
    elseif not string.find(body, '"isError":false', 1, true) then
        tool_errors = tool_errors + 1
    end
end
function done(summary, latency, requests)
    local non200, tool_errors = 0, 0
    for _, t in ipairs(threads) do
        non200 = non200 + t:get("non200")
        tool_errors = tool_errors + t:get("tool_errors")
    end
    local e = summary.errors
    local socket = e.connect + e.read + e.write + e.timeout
    local secs = summary.duration / 1e6
    io.write(string.format("requests      %d in %.1f s\n", summary.requests, secs))
    io.write(string.format("requests/s    %.0f\n", summary.requests / secs))
    io.write(string.format("latency p50   %.2f ms\n", latency:percentile(50) / 1000))
    io.write(string.format("latency p90   %.2f ms\n", latency:percentile(90) / 1000))
    io.write(string.format("latency p99   %.2f ms\n", latency:percentile(99) / 1000))
    io.write(string.format("latency max   %.2f ms\n", latency.max / 1000))
    io.write(string.format("errors        %d (non-200 %d, tool errors %d, socket %d)\n",
        non200 + tool_errors + socket + e.status, non200, tool_errors, socket))
end
LUA

echo "warm-up: 2 s" >&2
wrk -t "$THREADS" -c "$CONNECTIONS" -d 2s -s "$WORK/post.lua" "http://$ADDR/mcp" >/dev/null

echo "load: $TOOL, $CONNECTIONS connections (the connection limit), $THREADS threads, ${DURATION} s" >&2
wrk -t "$THREADS" -c "$CONNECTIONS" -d "${DURATION}s" --latency -s "$WORK/post.lua" \
    "http://$ADDR/mcp" | tee "$WORK/wrk.out" | sed -n '/^requests /,$p'

RSS_KB="$(awk '/^VmRSS/ {print $2}' "/proc/$SERVER_PID/status" 2>/dev/null || echo 0)"
kill -TERM "$SERVER_PID"
STATUS=0
wait "$SERVER_PID" || STATUS=$?
SERVER_PID=""

count() { grep -c "\"message\":\"$1\"" "$WORK/moat.log" || true; }
echo "broker rss    $((RSS_KB / 1024)) MB after the run"
echo "log events    rpc.error $(count rpc.error), tool.hard_timeout $(count tool.hard_timeout), worker.replaced $(count worker.replaced), worker.spawn_failed $(count worker.spawn_failed)"
echo "exit on TERM  $STATUS"

ERRORS="$(sed -n 's/^errors *\([0-9]*\).*/\1/p' "$WORK/wrk.out")"
if [ "${ERRORS:-1}" != 0 ] || [ "$STATUS" != 0 ] || [ "$(count rpc.error)" != 0 ]; then
    echo "FAILED: errors during the load run" >&2
    exit 1
fi
echo "OK: no errors"
