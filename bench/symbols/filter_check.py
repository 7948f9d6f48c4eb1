#!/usr/bin/env python3
"""find_symbol on C files: the same definitions as another build (identical answers).

For C files drawn at random with a fixed seed, every name the file's outline
lists, and as many names the file only uses (calls, fields, macros), is
looked up with `find_symbol` (exact, limited to that file) by two builds of
moat; the definitions (path, line, kind) must be the same. Used to check that
a change to how files are chosen for parsing (the C pre-parse filter) changes
no answer: run it with `--moat NEW --moat-alt OLD`.

Usage: filter_check.py --moat NEW --moat-alt OLD --tree DIR [--files 200] [--seed 11]
Standard library only (and `ctags_recall.py` beside it, for the client).
"""

import argparse
import os
import random
import re
import sys

from ctags_recall import Moat

WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{2,}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--moat", required=True)
    ap.add_argument("--moat-alt", required=True)
    ap.add_argument("--tree", required=True)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args()
    sources = []
    for d, dirs, files in os.walk(a.tree):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                sources.append(os.path.relpath(os.path.join(d, f), a.tree))
    rng = random.Random(a.seed)
    files = rng.sample(sources, min(a.files, len(sources)))
    new, old = Moat(a.moat, a.tree), Moat(a.moat_alt, a.tree)
    asked = same = defined = 0
    differ = []
    for rel in files:
        _, outline = new.call("file_outline", {"path": rel})
        names = sorted({i["name"] for i in outline.get("items", [])})
        with open(os.path.join(a.tree, rel), "rb") as fh:
            words = sorted({w.decode() for w in WORD.findall(fh.read())} - set(names))
        names += rng.sample(words, min(len(names) + 5, len(words)))
        for name in names:
            args = {"symbol": name, "path": rel, "exact": True}
            got = [(d["path"], d["line"], d["kind"]) for d in new.call("find_symbol", args)[1].get("definitions", [])]
            want = [(d["path"], d["line"], d["kind"]) for d in old.call("find_symbol", args)[1].get("definitions", [])]
            asked += 1
            defined += bool(want)
            if got == want:
                same += 1
            else:
                differ.append((rel, name, got, want))
    new.close()
    old.close()
    print(f"files {len(files)} (seed {a.seed}), names asked {asked} ({defined} defined in their file): "
          f"identical {same}/{asked}")
    for rel, name, got, want in differ[:20]:
        print(f"  differs: {name} in {rel}: {got} vs {want}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
