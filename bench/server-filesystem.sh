# Sourced by the benchmark scripts that compare against the Node reference
# server: installs @modelcontextprotocol/server-filesystem, pinned, from the
# npm registry into $CACHE (once; a later run only checks) and sets FS_JS to
# its entry point. Needs CACHE and log() from the caller.
FS_VERSION=2026.8.31
FS_DIR="$CACHE/server-filesystem-$FS_VERSION"
FS_JS="$FS_DIR/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
if [ ! -f "$FS_DIR/.installed" ]; then
    log "installing @modelcontextprotocol/server-filesystem@$FS_VERSION (npm)"
    rm -rf "$FS_DIR"
    mkdir -p "$FS_DIR"
    npm install --prefix "$FS_DIR" --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/server-filesystem@$FS_VERSION" >&2
    [ -f "$FS_JS" ] || { log "server-filesystem installed without $FS_JS"; exit 1; }
    touch "$FS_DIR/.installed"
fi
