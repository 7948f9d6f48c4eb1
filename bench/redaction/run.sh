#!/usr/bin/env bash
# Redaction recall and precision, in one run.
#
#   * recall: bench/redaction/recall.py plants samples of every credential
#     family in files and reads them back through `moat serve` (read_file and
#     search_code), printing recall per family;
#   * precision: the content bench's `fp` mode redacts every file of two real
#     code trees whole and prints replacements per MB (every one a false
#     positive unless inspected: MOAT_FP_SHOW=N prints the first N lines).
#     Trees: the Linux source (Debian's linux-source, as bench/search.sh
#     prepares it under $BENCH_CACHE/linux) and Django's source release
#     (`pip download --no-binary :all: --no-deps django`).
#
# Environment: BENCH_CACHE (default /var/cache/moat-bench), SEED.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$(dirname "$here")")
cache=${BENCH_CACHE:-/var/cache/moat-bench}
mkdir -p "$cache"

(cd "$repo" && cargo build --release --locked -p moat-broker)
python3 "$here/recall.py" "$repo/target/release/moat" "${SEED:-15}"

linux=$cache/linux
if [ ! -f "$linux/Makefile" ]; then
    tarball=$(ls /usr/src/linux-source-*.tar.* 2>/dev/null | sort -V | tail -n1 || true)
    [ -n "$tarball" ] || { echo "no Linux tree: apt-get install linux-source" >&2; exit 1; }
    tmp=$(mktemp -d "$cache/unpack.XXXXXX")
    tar -xf "$tarball" -C "$tmp"
    mv "$tmp"/linux-source-* "$linux"
    rmdir "$tmp"
fi
django=$cache/django
if [ ! -d "$django" ]; then
    tmp=$(mktemp -d)
    pip download --no-binary :all: --no-deps django -d "$tmp" >&2
    mkdir -p "$django"
    tar -xzf "$tmp"/*.tar.gz -C "$django" --strip-components=1
    rm -rf "$tmp"
fi
(cd "$repo" && cargo bench --locked -p moat-broker --bench content -- fp "$linux" "$django")
