#!/usr/bin/env bash
# Fuzz smoke run (CI): build every target, then run each for a few seconds.
# A property violation or a crash fails the run; the input that did it is in
# fuzz/artifacts/<target>/. Longer runs: see fuzz/README.md.
#
#   FUZZ_SMOKE_SECONDS   seconds per target (default 20)
#   fuzz/smoke.sh build  only build the targets (a later run finds them built)
#
# Installs what it needs: a nightly toolchain when one can be had (else the
# pinned one with RUSTC_BOOTSTRAP=1) and cargo-fuzz 0.13.2, whose binary is
# cached in ~/.cache/moat-fuzz/bin.
set -euo pipefail
cd "$(dirname "$0")"

seconds=${FUZZ_SMOKE_SECONDS:-20}
cache="$HOME/.cache/moat-fuzz"
export PATH="$cache/bin:$PATH"

# A nightly toolchain if one is installed or can be fetched; otherwise the
# pinned toolchain (rust-toolchain.toml) with RUSTC_BOOTSTRAP=1, which accepts
# the -Z flags cargo-fuzz passes. Either way the targets get the same
# instrumentation.
if rustup run nightly rustc --version >/dev/null 2>&1 ||
   rustup toolchain install nightly --profile minimal >/dev/null 2>&1; then
  toolchain=(+nightly)
else
  echo "fuzz smoke: no nightly toolchain; using the pinned one with RUSTC_BOOTSTRAP=1"
  toolchain=()
  export RUSTC_BOOTSTRAP=1
fi
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  cargo install cargo-fuzz --version 0.13.2 --locked --root "$cache"
fi

start=$(date +%s)
# -a: debug assertions and overflow checks on. -s none: the code under test is
# safe Rust; without a sanitizer the targets run several times faster.
cargo "${toolchain[@]}" fuzz build -a -s none
built=$(date +%s)
echo "fuzz smoke: targets built in $((built - start)) s"
[ "${1:-}" = build ] && exit 0

for target in $(cargo "${toolchain[@]}" fuzz list); do
  mkdir -p "corpus/$target"
  dict=()
  [ -f "dicts/$target.dict" ] && dict=("-dict=dicts/$target.dict")
  t0=$(date +%s)
  cargo "${toolchain[@]}" fuzz run -a -s none "$target" "corpus/$target" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" \
    2>"corpus/$target.log" || {
      grep -aE "panicked|assertion|ERROR" -A4 "corpus/$target.log" | head -40 >&2
      echo "fuzz smoke: $target FAILED (log: fuzz/corpus/$target.log, input: fuzz/artifacts/$target/)" >&2
      exit 1
    }
  runs=$(grep -aoE 'stat::number_of_executed_units: *[0-9]+' "corpus/$target.log" | grep -oE '[0-9]+$' || echo '?')
  echo "fuzz smoke: $target ok ($runs runs in $(( $(date +%s) - t0 )) s)"
done
echo "fuzz smoke: all targets ok in $(( $(date +%s) - start )) s ($((built - start)) s building)"
