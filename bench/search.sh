#!/usr/bin/env bash
# search_code against ripgrep over the Linux kernel source, in one run.
#
# Prepares (once, cached under $BENCH_CACHE, default /var/cache/moat-bench):
#   * the tree: Debian's linux-source package (apt-get), unpacked to $CACHE/linux;
#   * ripgrep: `rg` from PATH, else `cargo install ripgrep --locked` into
#     $CACHE/cargo (same search libraries as moat), else Debian's ripgrep;
#   * moat: `cargo build --release`.
# Then runs bench/search_driver.py: REPS repetitions per pattern of rg -c,
# rg -n and moat's search_code over stdio, interleaved. See bench/README.md.
#
# Environment: BENCH_CACHE, REPS (default 11), RG (a ripgrep binary),
# MOAT_SANDBOX__MODE (confined | in-process; default confined), MOAT_ALT (an
# earlier moat binary timed interleaved with this one: prints moat/alt).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
cache=${BENCH_CACHE:-/var/cache/moat-bench}
tree=$cache/linux
reps=${REPS:-11}
mkdir -p "$cache"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if [ ! -f "$tree/Makefile" ]; then
    tarball=$(ls /usr/src/linux-source-*.tar.* 2>/dev/null | sort -V | tail -n1 || true)
    if [ -z "$tarball" ]; then
        echo "installing linux-source (apt-get)..." >&2
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends linux-source
        tarball=$(ls /usr/src/linux-source-*.tar.* | sort -V | tail -n1)
    fi
    echo "unpacking $tarball into $tree..." >&2
    tmp=$(mktemp -d "$cache/unpack.XXXXXX")
    tar -xf "$tarball" -C "$tmp"
    rm -rf "$tree"
    mv "$tmp"/linux-source-* "$tree"
    rmdir "$tmp"
fi

# Debian's linux-source adds "/*" (ignore the whole top level) and
# "!/debian/" to the kernel's .gitignore, for its packaging repository: with
# .gitignore respected (both tools' default) nothing would be searched.
# Restore the upstream file's effect by dropping exactly those two lines.
if grep -qx '/\*' "$tree/.gitignore"; then
    sed -i -e '\#^/\*$#d' -e '\#^!/debian/$#d' "$tree/.gitignore"
fi

rg=${RG:-}
if [ -z "$rg" ]; then
    if [ -x "$cache/cargo/bin/rg" ]; then
        rg=$cache/cargo/bin/rg
    elif command -v rg >/dev/null; then
        rg=$(command -v rg)
    elif cargo install ripgrep --locked --root "$cache/cargo" >&2; then
        rg=$cache/cargo/bin/rg
    else
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y ripgrep
        rg=$(command -v rg)
    fi
fi

(cd "$repo" && cargo build --release --quiet -p moat-broker --bin moat)
moat=$repo/target/release/moat

echo "machine   $(uname -srm); $(nproc) cpus; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "tree      $(find "$tree" -type f | wc -l) files, $(du -sh "$tree" | cut -f1)"
exec python3 "$here/search_driver.py" --moat "$moat" --rg "$rg" --tree "$tree" --reps "$reps" ${MOAT_ALT:+--moat-alt "$MOAT_ALT"}
