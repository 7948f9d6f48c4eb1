#!/usr/bin/env bash
# The Windows build serving MCP over stdio, run under Wine: builds
# `moat.exe` for x86_64-pc-windows-gnu (release), then sends it a
# 2026-07-28 `tools/list` and a `read_file` on stdin and checks the answers,
# and that `doctor` says plainly that tool calls are not kernel-confined there.
#
#   scripts/wine-smoke.sh
#
# Needs Debian's wine64 and gcc-mingw-w64-x86-64 (the tree-sitter grammars
# are C), and the Rust target (`rustup target add x86_64-pc-windows-gnu`).
# Not part of .ci/run: Wine is a large install and this checks the fallback
# platform, not the sandbox.
set -euo pipefail
cd "$(dirname "$0")/.."

WINE=$(command -v wine64 || command -v wine || echo /usr/lib/wine/wine64)
[[ -x $WINE ]] || { echo "wine-smoke: wine64 is needed (apt-get install wine64)" >&2; exit 2; }
command -v x86_64-w64-mingw32-gcc >/dev/null \
    || { echo "wine-smoke: x86_64-w64-mingw32-gcc is needed (apt-get install gcc-mingw-w64-x86-64)" >&2; exit 2; }

target=x86_64-pc-windows-gnu
exe=target/$target/release/moat.exe
echo "==> cargo build --release --locked --target $target -p moat-broker --bin moat"
CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc \
CC_x86_64_pc_windows_gnu=x86_64-w64-mingw32-gcc AR_x86_64_pc_windows_gnu=x86_64-w64-mingw32-ar \
    cargo build --release --locked --target "$target" -p moat-broker --bin moat
file "$exe"

work=$(mktemp -d /tmp/moat-wine.XXXXXX)
trap 'WINEPREFIX="$work/prefix" wineserver -k 2>/dev/null || true; rm -rf "$work"' EXIT
export WINEPREFIX="$work/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
mkdir -p "$work/ws/src"
printf 'hello from windows\nsecond line\n' > "$work/ws/src/notes.txt"
printf 'API_KEY=%s%s\n' "AKIA" "ZQ7RM2KX9WPL4TVB" > "$work/ws/.env"
# Wine maps the Unix root to drive Z:.
ws_win="Z:${work//\//\\}\\ws"
echo "==> workspace $ws_win"

echo "==> Wine prefix"
"$WINE" wineboot.exe --init 2>/dev/null || true
mkdir -p "$work/bin"
cp "$exe" "$work/bin/moat.exe"
exe="$work/bin/moat.exe"
# Rust's std (1.78 and later) takes its randomness from ProcessPrng in
# bcryptprimitives.dll, which Wine gained only in 9.x (Debian 12 has 8.0).
# Where the prefix lacks it, a ten-line stand-in next to moat.exe (the first
# place Windows looks for a DLL) forwards to bcrypt's BCryptGenRandom.
if [[ ! -e $WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll ]]; then
    echo "==> Wine $("$WINE" --version) has no bcryptprimitives.dll: building a ProcessPrng stand-in"
    cat > "$work/bcryptprimitives.c" <<'C'
#include <windows.h>
#include <bcrypt.h>
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
C
    printf 'LIBRARY bcryptprimitives\nEXPORTS\n  ProcessPrng\n' > "$work/bcryptprimitives.def"
    x86_64-w64-mingw32-gcc -O2 -shared -o "$work/bin/bcryptprimitives.dll" \
        "$work/bcryptprimitives.c" "$work/bcryptprimitives.def" -lbcrypt
fi
"$WINE" "$exe" --version

meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"wine-smoke","version":"0"}}'
{
    printf '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{%s}}\n' "$meta"
    printf '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"src/notes.txt"},%s}}\n' "$meta"
    printf '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":".env"},%s}}\n' "$meta"
    printf '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"..\\\\..\\\\windows\\\\win.ini"},%s}}\n' "$meta"
} > "$work/requests.jsonl"

echo "==> moat.exe serve --workspace $ws_win (stdio)"
timeout 120 "$WINE" "$exe" serve --workspace "$ws_win" < "$work/requests.jsonl" \
    > "$work/stdout.jsonl" 2> "$work/stderr.log" || { cat "$work/stderr.log"; exit 1; }
tr -d '\r' < "$work/stdout.jsonl" > "$work/answers.jsonl"

answer() { jq -c "select(.id == $1)" "$work/answers.jsonl"; }
fail() { echo "FAIL: $*" >&2; echo "--- stderr ---" >&2; cat "$work/stderr.log" >&2; exit 1; }
[[ $(wc -l < "$work/answers.jsonl") == 4 ]] || fail "expected 4 answers: $(cat "$work/answers.jsonl")"
jq -e '.result.tools | length == 5' <<<"$(answer 1)" >/dev/null || fail "tools/list: $(answer 1)"
echo "ok: tools/list (first page of 5)"
jq -e '.result.isError == false and (.result.content[1].text | contains("hello from windows"))' \
    <<<"$(answer 2)" >/dev/null || fail "read_file: $(answer 2)"
jq -e '.result.structuredContent.untrusted_content == true' <<<"$(answer 2)" >/dev/null \
    || fail "read_file not marked untrusted: $(answer 2)"
echo "ok: read_file src/notes.txt over stdio: $(jq -c '.result.structuredContent | {path, total_lines, untrusted_content}' <<<"$(answer 2)")"
jq -e '.result.structuredContent.error == "denied_path"' <<<"$(answer 3)" >/dev/null \
    || fail ".env: $(answer 3)"
grep -q ZQ7RM2KX9WPL4TVB "$work/answers.jsonl" && fail "the key leaked"
echo "ok: .env is denied_path"
jq -e '.result.structuredContent.error == "outside_workspace"' <<<"$(answer 4)" >/dev/null \
    || fail "traversal: $(answer 4)"
echo "ok: ..\\..\\windows\\win.ini is outside_workspace"
grep -q 'sandbox.in_process' "$work/stderr.log" || fail "no in-process warning on stderr"
echo "ok: stderr warns that tool calls are not kernel-confined"

echo "==> moat.exe doctor"
"$WINE" "$exe" doctor --workspace "$ws_win" | tr -d '\r' | tee "$work/doctor.txt" || true
grep -q 'NOT kernel-confined' "$work/doctor.txt" || fail "doctor does not say NOT kernel-confined"
echo
echo "wine-smoke: all checks passed"
