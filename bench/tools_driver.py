#!/usr/bin/env python3
"""git_status and find_references through moat (stdio) next to `git status`
and `rg -w` run directly, on a git checkout of the Linux tree.

Standard library only. Usage (see bench/README.md, "Navigation and status
on the Linux tree"):

    python3 bench/tools_driver.py --moat target/release/moat \
        --repo $BENCH_CACHE/linux-git --rg $BENCH_CACHE/cargo/bin/rg [--moat-alt BIN]

Every call is timed from writing the request line to reading the whole
answer; the peers are timed as whole processes. Reps alternate between the
contenders; medians and quartiles are printed.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from search_driver import Moat, spread  # noqa: E402

ENV = {
    "MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS": "300",
    "MOAT_SANDBOX__MAX_SEARCH_FILES": "1000000",
    "MOAT_OBSERVABILITY__LOG_LEVEL": "warning",
}


def run_peer(argv, cwd):
    t = time.perf_counter()
    p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t, p.stdout


def fmt(xs):
    q1, q3 = spread(xs)
    return f"{statistics.median(xs) * 1000:8.0f} [{q1 * 1000:.0f},{q3 * 1000:.0f}]"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--moat", required=True)
    ap.add_argument("--moat-alt")
    ap.add_argument("--repo", required=True)
    ap.add_argument("--rg", required=True)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    mode = os.environ.get("MOAT_SANDBOX__MODE", "confined")
    env = dict(ENV, MOAT_SANDBOX__MODE=mode)
    moats = [("moat", Moat(a.moat, a.repo, env))]
    if a.moat_alt:
        moats.append(("moat-alt", Moat(a.moat_alt, a.repo, env)))
    files = subprocess.run(["git", "ls-files"], cwd=a.repo, stdout=subprocess.PIPE,
                           text=True).stdout.count("\n")
    print(f"repo   {a.repo}: {files} tracked files; moat mode {mode}; reps {a.reps}, "
          "alternating; medians in ms [q1,q3]")
    cases = [
        ("git_status (clean tree)", "git_status", {},
         ["git", "--no-optional-locks", "status", "--porcelain"]),
    ]
    for ident in ["ksys_sync_helper", "kmalloc"]:
        cases.append((f"find_references {ident}", "find_references", {"identifier": ident},
                      [a.rg, "-w", "-n", "--no-heading", ident, "."]))
    head = f"{'call':<34} {'peer':>16}"
    for name, _ in moats:
        head += f" {name:>16} {name + '/peer':>10}"
    print(head)
    print("-" * len(head))
    for label, tool, args, argv in cases:
        for _, m in moats:  # warm
            m.call(tool, args)
        run_peer(argv, a.repo)
        peer, mine = [], {name: [] for name, _ in moats}
        facts = ""
        for _ in range(a.reps):
            peer.append(run_peer(argv, a.repo)[0])
            for name, m in moats:
                dt, r = m.call(tool, args)
                mine[name].append(dt)
                if name == "moat":
                    if tool == "git_status":
                        facts = (f"{r['staged_count']}/{r['unstaged_count']}/"
                                 f"{r['untracked_count']} staged/unstaged/untracked")
                    else:
                        facts = (f"{r['total_references']} refs, {r['parsed_files']} files "
                                 f"parsed or lexed, {r['text_files']} as text")
        line = f"{label:<34} {fmt(peer):>16}"
        for name, _ in moats:
            ratio = statistics.median(mine[name]) / statistics.median(peer)
            line += f" {fmt(mine[name]):>16} {ratio:>9.2f}x"
        print(f"{line}   {facts}")
    for _, m in moats:
        m.close()


if __name__ == "__main__":
    main()
