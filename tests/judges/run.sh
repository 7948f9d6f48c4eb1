#!/usr/bin/env bash
# The outside judges, against the real moat binary:
#   1. the official MCP conformance suite (server scenarios) over HTTP, for
#      --requirements 2025-11-25 and 2026-07-28 (0.2.0-alpha.12) and the stable
#      0.1.16 suite, each gated by its expected-failures file in
#      tests/judges/expected-failures/ (a new failure, or an expected failure that
#      starts passing, fails the run);
#   2. the official Python SDK over stdio, legacy and 2026-07-28 modes: every
#      tool called with valid arguments (the SDK validates results against our
#      outputSchemas) and with a traversal, and the resources listed, read and
#      completed (tests/judges/sdk_check.py);
#   3. the MCP Inspector CLI: tools/list, tools/call and resources/read over stdio and HTTP.
# Prints a summary; exits non-zero if any judge disagrees.
#
#   tests/judges/run.sh                # uses target/debug/moat (built if missing)
#   MOAT_BIN=path/to/moat tests/judges/run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

bash scripts/peers.sh || { echo "judges: could not install the peers" >&2; exit 1; }
PEERS=$(bash scripts/peers.sh --print)
BIN=${MOAT_BIN:-$ROOT/target/debug/moat}
[[ -x "$BIN" ]] || cargo build -p moat-broker --quiet || exit 1

WORK=$(mktemp -d -t moat-judges-XXXXXX)
SERVER_PID=""
cleanup() { [[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

# A small project with history, so every tool has something to answer.
WS="$WORK/demo-project"
mkdir -p "$WS/src/demo" "$WS/tests"
printf '# Demo\n\nA fixture project.\n' > "$WS/README.md"
printf '[project]\nname = "demo"\nversion = "1.2.3"\ndependencies = ["httpx>=0.28"]\n' > "$WS/pyproject.toml"
printf 'TIMEOUT = 5\n\n\nclass Engine:\n    def start(self, name):\n        return name\n\n\ndef main():\n    return Engine()\n' > "$WS/src/demo/core.py"
printf 'from demo.core import main\n\n\ndef test_main():\n    assert main()\n' > "$WS/tests/test_core.py"
git -C "$WS" init -q -b main
git -C "$WS" add -A
git -C "$WS" -c user.name=Judge -c user.email=judge@example.invalid commit -qm "Add the project"
printf '\n# more\n' >> "$WS/README.md"
git -C "$WS" -c user.name=Judge -c user.email=judge@example.invalid commit -qam "Extend the readme"

failures=0
summary=()
note() { summary+=("$1"); }

# --- HTTP server for the conformance suites and the Inspector -------------------
LOG="$WORK/http.log"
MOAT_HTTP__PORT=0 "$BIN" serve --transport http --workspace "$WS" 2>"$LOG" &
SERVER_PID=$!
ADDR=""
for _ in $(seq 1 200); do
  ADDR=$(grep -o '"addr":"[^"]*"' "$LOG" 2>/dev/null | head -1 | sed 's/"addr":"\(.*\)"/\1/')
  [[ -n "$ADDR" ]] && break
  sleep 0.05
done
[[ -n "$ADDR" ]] || { echo "judges: moat did not start over HTTP"; cat "$LOG"; exit 1; }
URL="http://$ADDR/mcp"
echo "judges: moat serving $URL"

conformance() { # NAME WRAPPER BASELINE [ARGS...]
  local name=$1 wrapper=$2 baseline=$3; shift 3
  local out="$WORK/conformance-$name.txt"
  "$PEERS/bin/$wrapper" server --url "$URL" --expected-failures "$baseline" -o "$WORK/results-$name" "$@" >"$out" 2>&1
  local rc=$?
  local total passed failed
  total=$(grep -E '^Total:' "$out" | tail -1)
  passed=$(grep -cE '^✓' "$out")
  failed=$(grep -cE '^✗' "$out")
  echo "----- conformance $name (exit $rc) -----"
  grep -E '^(✓|✗)|^Total:|unexpected|stale|Unexpected|Stale' "$out" | sed 's/^/  /'
  if ((rc != 0)); then
    failures=$((failures + 1))
    note "conformance $name: FAILED (exit $rc) — scenarios ✓ $passed / ✗ $failed; $total"
  else
    note "conformance $name: ok — scenarios ✓ $passed / ✗ $failed (all ✗ expected); checks $total"
  fi
}

conformance "2025-11-25" mcp-conformance "$ROOT/tests/judges/expected-failures/2025-11-25.yml" --requirements 2025-11-25
conformance "2026-07-28" mcp-conformance "$ROOT/tests/judges/expected-failures/2026-07-28.yml" --requirements 2026-07-28
conformance "stable-0.1.16" mcp-conformance-0.1 "$ROOT/tests/judges/expected-failures/stable.yml"

# --- Python SDK over stdio ------------------------------------------------------
echo "----- python SDK (mcp) over stdio -----"
if "$PEERS/bin/python" "$ROOT/tests/judges/sdk_check.py" "$BIN" "$WS" legacy 2026-07-28; then
  note "python SDK (stdio, legacy + 2026-07-28): ok"
else
  failures=$((failures + 1)); note "python SDK: FAILED"
fi

# --- Inspector CLI --------------------------------------------------------------
inspect() { # LABEL EXPECT ARGS...
  local label=$1 expect=$2; shift 2
  local out
  out=$("$PEERS/bin/mcp-inspector" --cli "$@" 2>&1)
  local rc=$?
  if ((rc == 0)) && grep -q -- "$expect" <<<"$out"; then
    echo "  ok    inspector $label"
  else
    echo "  FAIL  inspector $label (exit $rc): $(head -c 400 <<<"$out")"
    failures=$((failures + 1)); note "inspector $label: FAILED"
    return
  fi
}
echo "----- inspector CLI -----"
inspect "stdio legacy tools/list" '"read_file"' --protocol-era legacy "$BIN" serve --workspace "$WS" --method tools/list --format json
inspect "stdio modern tools/list" '"read_file"' --protocol-era modern "$BIN" serve --workspace "$WS" --method tools/list --format json
inspect "stdio tools/call" 'A fixture project' --protocol-era auto "$BIN" serve --workspace "$WS" --method tools/call --tool-name read_file --tool-args-json '{"path":"README.md"}' --format json
inspect "http modern tools/list" '"search_code"' --protocol-era modern "$URL" --method tools/list --format json
inspect "http legacy tools/call" 'Extend the readme' --protocol-era legacy "$URL" --method tools/call --tool-name git_log --tool-args-json '{"limit":5}' --format json
inspect "stdio tools/call git_show" 'Extend the readme' --protocol-era modern "$BIN" serve --workspace "$WS" --method tools/call --tool-name git_show --tool-args-json '{"stat_only":true}' --format json
inspect "http legacy tools/call git_blame" 'Extend the readme' --protocol-era legacy "$URL" --method tools/call --tool-name git_blame --tool-args-json '{"path":"README.md"}' --format json
inspect "http modern tools/call git_status" 'On branch main' --protocol-era modern "$URL" --method tools/call --tool-name git_status --tool-args-json '{}' --format json
inspect "http modern tools/call" 'class Engine' --protocol-era modern "$URL" --method tools/call --tool-name search_code --tool-args-json '{"pattern":"engine"}' --format json
inspect "stdio find_files" 'src/demo/core.py' --protocol-era auto "$BIN" serve --workspace "$WS" --method tools/call --tool-name find_files --tool-args-json '{"glob":"**/*.py"}' --format json
inspect "stdio directory_tree" 'test_core.py' --protocol-era auto "$BIN" serve --workspace "$WS" --method tools/call --tool-name directory_tree --tool-args-json '{"depth":3}' --format json
inspect "http modern file_outline" 'def start(self, name)' --protocol-era modern "$URL" --method tools/call --tool-name file_outline --tool-args-json '{"path":"src/demo/core.py"}' --format json
inspect "http legacy find_references" 'test_core.py' --protocol-era legacy "$URL" --method tools/call --tool-name find_references --tool-args-json '{"identifier":"main"}' --format json
inspect "stdio resources/read" 'A fixture project' --protocol-era legacy "$BIN" serve --workspace "$WS" --method resources/read --uri 'moat://workspace/README.md' --format json
inspect "http modern resources/read" 'A fixture project' --protocol-era modern "$URL" --method resources/read --uri 'moat://workspace/README.md' --format json
[[ " ${summary[*]} " == *"inspector"* ]] || note "inspector CLI (stdio + HTTP, tools/list, tools/call, resources/read): ok"

echo
echo "===== outside judges ====="
for line in "${summary[@]}"; do echo "  $line"; done
if ((failures)); then echo "judges: $failures failure(s)"; exit 1; fi
echo "judges: all agree"
