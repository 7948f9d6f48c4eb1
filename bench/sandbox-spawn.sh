#!/usr/bin/env bash
# bench/sandbox-spawn.sh — what confining a worker costs, measured.
#
# Usage: bench/sandbox-spawn.sh [N]        (N runs per measurement, default 200)
#
# Builds, in release mode, the sandbox probe (tests/src/bin/probe.rs) and the
# real `moat` binary, then prints medians (and p10/p90) of:
#
# 1. probe bench N / probe bench N --no-confine
#    Spawn a child the way the broker spawns a worker (socketpair on fd 3,
#    built environment, own process group, parent-death signal), let it run
#    moat_sandbox::enter — fds, stdio, dumpable, rlimits,
#    no_new_privs, then (confined) Landlock and the seccomp allow-list — and
#    time spawn → its "ready" line, then spawn → reaped. The difference between
#    the two lines is the cost of Landlock + seccomp.
# 2. probe bench-moat N target/release/moat
#    The real binary, cold, on a one-file workspace: spawn → first tools/list
#    answer (broker only), spawn → first read_file answer (needs the first
#    confined worker to be spawned, confined and ready), in confined and
#    in-process mode; and the wall time of `moat doctor`, which starts and
#    confines one worker.
#
# Linux only (Landlock + seccomp); run on an otherwise idle machine — timings
# of a few milliseconds are easily disturbed. Benchmarks, not tests: nothing
# here fails on a slow result. Results of a run are quoted in docs/sandbox.md.
set -euo pipefail
cd "$(dirname "$0")/.."

n="${1:-200}"

echo "==> building probe and moat (release)" >&2
cargo build --release --quiet -p moat-tests --bin probe
cargo build --release --quiet -p moat-broker --bin moat
probe=target/release/probe
moat=target/release/moat

echo "==> $(uname -sr), $(nproc) CPUs, n=$n"
echo
echo "-- spawn + enter the sandbox (probe) --"
# Warm the page cache once, then measure.
"$probe" bench 5 >/dev/null
"$probe" bench 5 --no-confine >/dev/null
"$probe" bench "$n" --no-confine
"$probe" bench "$n"
echo
echo "-- the real moat binary, cold --"
"$probe" bench-moat 3 "$moat" >/dev/null
"$probe" bench-moat "$n" "$moat"
