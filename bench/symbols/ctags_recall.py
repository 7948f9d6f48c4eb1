#!/usr/bin/env python3
"""Definitions moat finds against Universal Ctags on a real C tree.

Two figures, over files chosen at random with a fixed seed (half of them
"tuned" — looked at while changing the parser — and half held out, reported
apart):

* outline recall: of the functions ctags lists in a file (`--c-kinds=f`),
  the share `file_outline` lists with the same name and line;
* find_symbol recall: for functions picked from those files, whether
  `find_symbol` (exact, under the file's top-level directory) reports that
  definition, and
  how long each call takes (median and worst).

A third figure, for the best-known functions of the tree (`--well-known`,
a default list for the Linux tree): `find_symbol` over the whole tree
against every function definition ctags finds for the name (in the files
where the name opens a line's declaration), and how long each call takes.

Usage: ctags_recall.py --moat BINARY --tree DIR [--files 60] [--symbols 40]
                       [--well-known NAME,NAME,...]
Needs `ctags` (Universal Ctags) on the PATH. Standard library only.
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "moat-bench", "version": "0"},
}


class Moat:
    def __init__(self, binary, tree):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent",
               "MOAT_OBSERVABILITY__LOG_LEVEL": "warning",
               "MOAT_SANDBOX__MAX_SEARCH_FILES": "1000000",
               "MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS": "60"}
        self.proc = subprocess.Popen([binary, "serve", "--workspace", tree],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.next_id = 1

    def call(self, tool, args):
        req = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
               "params": {"name": tool, "arguments": args, "_meta": META}}
        self.next_id += 1
        t = time.perf_counter()
        self.proc.stdin.write((json.dumps(req) + "\n").encode())
        self.proc.stdin.flush()
        r = json.loads(self.proc.stdout.readline())
        return time.perf_counter() - t, r["result"]["structuredContent"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def ctags_functions(tree, rel):
    out = subprocess.run(["ctags", "-x", "--c-kinds=f", "--language-force=C", rel],
                         cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True).stdout
    found = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "function":
            found.add((parts[0], int(parts[2])))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--moat", required=True)
    ap.add_argument("--tree", required=True)
    ap.add_argument("--files", type=int, default=60)
    ap.add_argument("--symbols", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--well-known", default="kmalloc,kfree,printk,schedule,mutex_lock,"
                    "spin_lock,copy_from_user,memcpy,kzalloc,wake_up_process")
    a = ap.parse_args()

    sources = []
    for d, dirs, files in os.walk(a.tree):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        for f in files:
            if f.endswith(".c"):
                sources.append(os.path.relpath(os.path.join(d, f), a.tree))
    sources.sort()
    rng = random.Random(a.seed)
    picked = rng.sample(sources, min(a.files, len(sources)))
    halves = {"tuned": picked[: len(picked) // 2], "held-out": picked[len(picked) // 2:]}

    m = Moat(a.moat, a.tree)
    print(f"tree {a.tree}: {len(sources)} C files; {len(picked)} sampled (seed {a.seed})")
    candidates = {"tuned": [], "held-out": []}
    for half, files in halves.items():
        want = got = 0
        methods = {}
        for rel in files:
            ct = ctags_functions(a.tree, rel)
            if not ct:
                continue
            _, o = m.call("file_outline", {"path": rel})
            mine = {(d["name"], d["line"]) for d in o.get("items", [])}
            methods[o.get("method")] = methods.get(o.get("method"), 0) + 1
            want += len(ct)
            got += len(ct & mine)
            candidates[half] += [(n, rel, line) for n, line in sorted(ct)]
        rate = 100.0 * got / want if want else 0.0
        print(f"outline  {half:<9} {got}/{want} ctags functions ({rate:.1f}%); files by method {methods}")

    for half in ("tuned", "held-out"):
        pool = candidates[half]
        sample = rng.sample(pool, min(a.symbols // 2, len(pool)))
        hits, times, misses = 0, [], []
        for name, rel, line in sample:
            top = rel.split("/", 1)[0]
            dt, o = m.call("find_symbol", {"symbol": name, "path": top})
            times.append(dt)
            if any(d["path"] == rel and d["line"] == line for d in o.get("definitions", [])):
                hits += 1
            else:
                misses.append(f"{name} {rel}:{line}")
        print(f"find_symbol {half:<9} {hits}/{len(sample)} found; per call median "
              f"{statistics.median(times) * 1000:.0f} ms, worst {max(times) * 1000:.0f} ms")
        for miss in misses[:10]:
            print(f"  missed {miss}")
    for name in [n for n in a.well_known.split(",") if n]:
        files = subprocess.run(
            ["grep", "-rlE", "--include=*.c", "--include=*.h",
             rf"^[A-Za-z_].*\b{name}\s*\(", "."],
            cwd=a.tree, capture_output=True, text=True).stdout.split()
        want = set()
        for rel in files:
            rel = os.path.normpath(rel)
            want |= {(rel, line) for n, line in ctags_functions(a.tree, rel) if n == name}
        dt, o = m.call("find_symbol", {"symbol": name, "path": "."})
        got = {(d["path"], d["line"]) for d in o.get("definitions", [])}
        print(f"well-known {name:<16} ctags {len(want):>3}, found {len(want & got):>3} "
              f"({len(got)} reported) in {dt * 1000:.0f} ms over the whole tree")
    m.close()


if __name__ == "__main__":
    main()
