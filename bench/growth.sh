#!/usr/bin/env bash
# The navigation tools against their peers on the Linux tree, and how moat's
# cost grows with the work (tree size, entries, file size), with RSS; writes
# bench/growth.png. See bench/growth.py and bench/README.md.
#
#   bench/growth.sh                              # the whole run, under 10 minutes on 2 cores
#   bench/growth.sh --moat-alt /path/to/moat     # a second moat binary in the same run
#   bench/growth.sh --reps 3 --reps-b 3          # quicker, noisier
#   bench/growth.sh --only b --no-plot           # growth only, standard library only
#
# Installs, pinned, from the package registries only, into $BENCH_CACHE
# (default ~/.cache/moat-bench; idempotent, a second run only checks):
#   npm   @modelcontextprotocol/server-filesystem 2026.8.31 (the same copy as bench/peers.sh)
#   PyPI  matplotlib 3.11.2, in a virtualenv, for the figure only (not with --no-plot)
# Needs the Linux tree of bench/search.sh ($LINUX_TREE, else $BENCH_CACHE/linux,
# else /var/cache/moat-bench/linux) and ripgrep ($RG, else rg on PATH). Builds
# the release binary unless MOAT names one. growth.py builds its workspace of
# copies under $BENCH_CACHE/growth once (about 1.3 GB: the whole tree is one
# of the sizes).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")

MPL_VERSION=3.11.2
CACHE="${BENCH_CACHE:-$HOME/.cache/moat-bench}"
log() { printf '[growth] %s\n' "$*" >&2; }

command -v node >/dev/null || { log "node and npm are needed (Debian: apt-get install nodejs npm)"; exit 2; }
command -v python3 >/dev/null || { log "python3 (3.10 or later) is needed"; exit 2; }
mkdir -p "$CACHE"

plot=yes
for arg in "$@"; do [ "$arg" = --no-plot ] && plot=no; done

. "$here/server-filesystem.sh"

python=python3
if [ "$plot" = yes ]; then
    VENV="$CACHE/growth-venv"
    if [ ! -f "$VENV/.installed-$MPL_VERSION" ]; then
        log "installing matplotlib==$MPL_VERSION (PyPI, virtualenv)"
        rm -rf "$VENV"
        python3 -m venv "$VENV"
        "$VENV/bin/pip" install --quiet --disable-pip-version-check "matplotlib==$MPL_VERSION" >&2
        touch "$VENV/.installed-$MPL_VERSION"
    fi
    python="$VENV/bin/python"
fi

tree="${LINUX_TREE:-}"
if [ -z "$tree" ]; then
    for t in "$CACHE/linux" /var/cache/moat-bench/linux; do
        [ -f "$t/Makefile" ] && { tree=$t; break; }
    done
fi
[ -n "$tree" ] && [ -f "$tree/Makefile" ] || {
    log "no Linux tree: run bench/search.sh once (it unpacks one), or set LINUX_TREE"; exit 2; }

rg="${RG:-$(command -v rg || true)}"
[ -n "$rg" ] || { log "ripgrep is needed (Debian: apt-get install ripgrep), or set RG"; exit 2; }

moat="${MOAT:-}"
if [ -z "$moat" ]; then
    log "building moat (release)"
    (cd "$repo" && cargo build --release --locked --quiet -p moat-broker --bin moat)
    moat="$repo/target/release/moat"
fi

log "node $(node --version), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
exec "$python" "$here/growth.py" --moat "$moat" --tree "$tree" --cache "$CACHE/growth" \
    --rg "$rg" --node "$(command -v node)" --fs-server "$FS_JS" "$@"
