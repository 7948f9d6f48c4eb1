#!/usr/bin/env bash
# git_log and git_diff through moat (stdio) next to the same git commands run
# directly, over a generated repository of ~1,000 commits (cached under
# $BENCH_CACHE, default /var/cache/moat-bench). See bench/README.md.
#
# Environment: BENCH_CACHE, REPS (default 21), MOAT_SANDBOX__MODE, MOAT_BIN (a
# prebuilt moat instead of the release build). Arguments are passed to the
# driver, e.g. `--moat-alt /path/to/previous/moat` for before/after in one run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
cache=${BENCH_CACHE:-/var/cache/moat-bench}
mkdir -p "$cache"

moat=${MOAT_BIN:-}
if [ -z "$moat" ]; then
    (cd "$repo" && cargo build --release --quiet -p moat-broker --bin moat)
    moat="$repo/target/release/moat"
fi
echo "machine   $(uname -srm); $(nproc) cpus"
exec python3 "$here/git_driver.py" --moat "$moat" \
    --repo "$cache/git-1000" --reps "${REPS:-21}" "$@"
