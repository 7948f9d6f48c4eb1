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
#   AUTH=oauth bench/http-load.sh         # OAuth validation on (an ES256 JWT)
#   AUTH=compare bench/http-load.sh       # bearer, then OAuth: the ratio
#                                         # (target >= 90%) and p99 of each,
#                                         # then valid callers during a burst
#                                         # of invalid tokens
#   AUTH=sweep DURATION=5 bench/http-load.sh   # bearer, every sandbox.workers
#                                         # in SWEEP_WORKERS (1 2 4) by every
#                                         # connection count in SWEEP_CONNECTIONS
#                                         # (8 64 256): one table
#
# With OAuth the key pair and the tokens are made with openssl (ALG=ES256,
# RS256 or EdDSA) and the JWKS is a file (http.oauth.jwks_path), so the
# figures are the validator's own cost. The burst sends tokens with random
# `kid`s and forged signatures on BURST_CONNECTIONS more connections
# (default CONNECTIONS/2) while CONNECTIONS/2 valid callers are measured,
# and compares them with the same valid callers alone.
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
AUTH="${AUTH:-bearer}"             # bearer, oauth or compare
ALG="${ALG:-ES256}"                # OAuth token algorithm: ES256, RS256 or EdDSA
BURST_CONNECTIONS="${BURST_CONNECTIONS:-$((CONNECTIONS / 2))}"
SWEEP_WORKERS="${SWEEP_WORKERS:-1 2 4}"
SWEEP_CONNECTIONS="${SWEEP_CONNECTIONS:-8 64 256}"
case "$AUTH" in bearer|oauth|compare|sweep) ;; *) echo "AUTH must be bearer, oauth, compare or sweep" >&2; exit 2 ;; esac

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

b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }

# OAuth material: a key pair, its JWKS (a file), one valid token and, for
# the burst, tokens with random kids and forged signatures.
oauth_material() {
    local pem="$WORK/key.pem" header claims input sig now
    case "$ALG" in
        ES256) openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pem" 2>/dev/null ;;
        RS256) openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$pem" 2>/dev/null ;;
        EdDSA) openssl genpkey -algorithm ed25519 -out "$pem" 2>/dev/null ;;
        *) echo "ALG must be ES256, RS256 or EdDSA" >&2; exit 2 ;;
    esac
    local der="$WORK/pub.der"
    openssl pkey -in "$pem" -pubout -outform DER -out "$der" 2>/dev/null
    case "$ALG" in
        ES256) local x y
            x="$(tail -c 64 "$der" | head -c 32 | b64url)"; y="$(tail -c 32 "$der" | b64url)"
            printf '{"keys":[{"kty":"EC","crv":"P-256","kid":"load-1","x":"%s","y":"%s"}]}' "$x" "$y" ;;
        RS256) local n
            n="$(openssl rsa -in "$pem" -noout -modulus 2>/dev/null | sed 's/Modulus=//' | xxd -r -p | b64url)"
            printf '{"keys":[{"kty":"RSA","kid":"load-1","alg":"RS256","n":"%s","e":"AQAB"}]}' "$n" ;;
        EdDSA) printf '{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"load-1","x":"%s"}]}' "$(tail -c 32 "$der" | b64url)" ;;
    esac >"$WORK/jwks.json"
    now="$(date +%s)"
    header="$(printf '{"alg":"%s","kid":"load-1","typ":"at+jwt"}' "$ALG" | b64url)"
    claims="$(printf '{"iss":"https://issuer.load","aud":"https://moat.load/mcp","sub":"load","exp":%d,"nbf":%d,"scope":"moat:read"}' $((now + 3600)) $((now - 10)) | b64url)"
    input="$header.$claims"
    printf '%s' "$input" >"$WORK/input"
    case "$ALG" in
        ES256) # DER ECDSA to r||s
            sig="$(openssl dgst -sha256 -sign "$pem" "$WORK/input" | openssl asn1parse -inform DER 2>/dev/null \
                | sed -n 's/.*INTEGER *:\([0-9A-F]*\).*/\1/p' | while read -r v; do while [ ${#v} -gt 64 ]; do v=${v#??}; done; printf '%064s' "$v" | tr ' ' 0; done \
                | xxd -r -p | b64url)" ;;
        RS256) sig="$(openssl dgst -sha256 -sign "$pem" "$WORK/input" | b64url)" ;;
        EdDSA) sig="$(openssl pkeyutl -sign -inkey "$pem" -rawin -in "$WORK/input" | b64url)" ;;
    esac
    OAUTH_TOKEN="$input.$sig"
    # Invalid tokens: random kids (unknown: at most one JWKS refresh a
    # minute) and the known kid with a forged signature.
    : >"$WORK/bad-tokens"
    for i in $(seq 1 200); do
        local kid bad_header
        kid="$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
        if [ $((i % 2)) = 0 ]; then kid=load-1; fi
        bad_header="$(printf '{"alg":"%s","kid":"%s"}' "$ALG" "$kid" | b64url)"
        printf '%s.%s.%s\n' "$bad_header" "$claims" "$(head -c 64 /dev/urandom | b64url)" >>"$WORK/bad-tokens"
    done
}

# Start moat with authentication $1 (bearer or oauth); sets SERVER_PID, ADDR
# and TOKEN.
start_server() {
    local mode="$1" auth_env
    if [ "$mode" = oauth ]; then
        TOKEN="$OAUTH_TOKEN"
        auth_env=(MOAT_HTTP__AUTH=oauth MOAT_HTTP__OAUTH__ISSUER=https://issuer.load
            MOAT_HTTP__OAUTH__AUDIENCE=https://moat.load/mcp
            MOAT_HTTP__OAUTH__JWKS_PATH="$WORK/jwks.json")
    else
        TOKEN="$BEARER_TOKEN"
        auth_env=(MOAT_HTTP__BEARER_TOKEN="$TOKEN")
    fi
    : >"$WORK/moat.log"
    env -i PATH="$PATH" HOME="$WORK" \
        MOAT_HTTP__PORT=0 \
        "${auth_env[@]}" \
        MOAT_HTTP__MAX_CONNECTIONS="$MAX_CONNECTIONS" \
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
    write_lua
}

write_lua() {
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
# The burst: every request carries the next invalid token (all answered 401).
cat >"$WORK/bad.lua" <<LUA
local tokens = {}
for line in io.lines("$WORK/bad-tokens") do table.insert(tokens, line) end
local i = 0
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) not401 = 0 end
function request()
    i = i % #tokens + 1
    return wrk.format("POST", nil, {
        ["Content-Type"] = "application/json",
        ["Authorization"] = "Bearer " .. tokens[i],
        ["MCP-Protocol-Version"] = "2026-07-28",
        ["Mcp-Method"] = "tools/call",
        ["Mcp-Name"] = "$TOOL",
    }, '$BODY')
end
function response(status, headers, body)
    if status ~= 401 then not401 = not401 + 1 end
end
function done(summary, latency, requests)
    local not401 = 0
    for _, t in ipairs(threads) do not401 = not401 + t:get("not401") end
    local secs = summary.duration / 1e6
    io.write(string.format("burst: %d invalid-token requests in %.1f s (%.0f/s), %d not answered 401\n",
        summary.requests, secs, summary.requests / secs, not401))
end
LUA
}

# Load with $1 connections for $2 seconds; the wrk summary on stdout and in
# $WORK/wrk.out.
load() {
    wrk -t "$THREADS" -c "$1" -d "${2}s" --latency -s "$WORK/post.lua" \
        "http://$ADDR/mcp" | tee "$WORK/wrk.out" | sed -n '/^requests /,$p'
    ERRORS_SEEN=$((ERRORS_SEEN + $(sed -n 's/^errors *\([0-9]*\).*/\1/p' "$WORK/wrk.out")))
}

field() { sed -n "s|^$1 *\([0-9.]*\).*|\1|p" "$WORK/wrk.out"; }

count() { grep -c "\"message\":\"$1\"" "$WORK/moat.log" || true; }

stop_server() {
    RSS_KB="$(awk '/^VmRSS/ {print $2}' "/proc/$SERVER_PID/status" 2>/dev/null || echo 0)"
    kill -TERM "$SERVER_PID"
    STATUS=0
    wait "$SERVER_PID" || STATUS=$?
    SERVER_PID=""
    echo "broker rss    $((RSS_KB / 1024)) MB after the run"
    echo "log events    rpc.error $(count rpc.error), tool.hard_timeout $(count tool.hard_timeout), worker.replaced $(count worker.replaced), worker.spawn_failed $(count worker.spawn_failed)"
    echo "exit on TERM  $STATUS"
    [ "$STATUS" = 0 ] || TERM_FAILED=1
    [ "$(count rpc.error)" = 0 ] || TERM_FAILED=1
}

BEARER_TOKEN="$TOKEN"
ERRORS_SEEN=0
TERM_FAILED=0
MAX_CONNECTIONS="$CONNECTIONS"
case "$AUTH" in bearer|sweep) ;; *) oauth_material ;; esac

# One run at the connection limit; prints its figures, leaves requests/s
# and p99 in RPS and P99.
measure() {
    start_server "$1"
    echo "warm-up: 2 s" >&2
    wrk -t "$THREADS" -c "$CONNECTIONS" -d 2s -s "$WORK/post.lua" "http://$ADDR/mcp" >/dev/null
    echo "load: $TOOL, auth $1, $CONNECTIONS connections (the connection limit), $THREADS threads, ${DURATION} s" >&2
    echo "== auth $1"
    load "$CONNECTIONS" "$DURATION"
    RPS="$(field requests/s)"; P99="$(field 'latency p99')"
    stop_server
}

case "$AUTH" in
    bearer|oauth) measure "$AUTH" ;;
    sweep)
        # Each cell is its own server: the connection limit and the in-flight
        # limit are the cell's connection count, the pool its worker count.
        TABLE="$WORK/sweep.txt"
        : >"$TABLE"
        for w in $SWEEP_WORKERS; do
            for c in $SWEEP_CONNECTIONS; do
                WORKERS="$w"; CONNECTIONS="$c"; MAX_CONNECTIONS="$c"
                measure bearer
                printf '| %s | %s | %s | %s | %s | %s |\n' "$w" "$c" "$RPS" \
                    "$(field 'latency p50')" "$P99" "$(sed -n 's/^errors *\([0-9]*\).*/\1/p' "$WORK/wrk.out")" >>"$TABLE"
            done
        done
        echo "== sweep: $TOOL, bearer, log level $LOG_LEVEL, $THREADS wrk threads, ${DURATION} s per cell, load $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "| sandbox.workers | connections | req/s | p50 ms | p99 ms | errors |"
        echo "|---:|---:|---:|---:|---:|---:|"
        cat "$TABLE"
        ;;
    compare)
        measure bearer; BEARER_RPS="$RPS"; BEARER_P99="$P99"
        measure oauth; OAUTH_RPS="$RPS"; OAUTH_P99="$P99"
        echo "== oauth / bearer at the connection limit ($ALG)"
        awk -v o="$OAUTH_RPS" -v b="$BEARER_RPS" -v op="$OAUTH_P99" -v bp="$BEARER_P99" 'BEGIN {
            printf "throughput    %.0f / %.0f requests/s = %.1f%% (target >= 90%%)\n", o, b, 100 * o / b
            printf "latency p99   %.2f ms with OAuth, %.2f ms with bearer\n", op, bp }'
        # Valid callers alone, then during a burst of invalid tokens on
        # more connections (the limit raised to hold both).
        HALF=$((CONNECTIONS / 2))
        MAX_CONNECTIONS=$((HALF + BURST_CONNECTIONS))
        start_server oauth
        wrk -t "$THREADS" -c "$HALF" -d 2s -s "$WORK/post.lua" "http://$ADDR/mcp" >/dev/null
        echo "== valid callers alone ($HALF connections)"
        load "$HALF" "$DURATION"
        ALONE_RPS="$(field requests/s)"; ALONE_P99="$(field 'latency p99')"
        echo "== valid callers during a burst of invalid tokens ($BURST_CONNECTIONS more connections)"
        wrk -t 1 -c "$BURST_CONNECTIONS" -d "$((DURATION + 2))s" -s "$WORK/bad.lua" "http://$ADDR/mcp" >"$WORK/burst.out" &
        BURST_PID=$!
        sleep 1
        load "$HALF" "$DURATION"
        wait "$BURST_PID" || true
        cat "$WORK/burst.out"
        BURST_RPS="$(field requests/s)"; BURST_P99="$(field 'latency p99')"
        awk -v a="$ALONE_RPS" -v b="$BURST_RPS" -v ap="$ALONE_P99" -v bp="$BURST_P99" 'BEGIN {
            printf "valid callers %.0f requests/s during the burst, %.0f alone = %.1f%%; p99 %.2f ms vs %.2f ms\n", b, a, 100 * b / a, bp, ap }'
        echo "jwks refreshes $(count oauth.jwks_refreshed) (at most one per 60 s)"
        grep -q ' 0 not answered 401' "$WORK/burst.out" || { echo "FAILED: an invalid token was not refused" >&2; exit 1; }
        stop_server
        ;;
esac

if [ "$ERRORS_SEEN" != 0 ] || [ "$TERM_FAILED" != 0 ]; then
    echo "FAILED: errors during the load run" >&2
    exit 1
fi
echo "OK: no errors"
