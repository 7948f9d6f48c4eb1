#!/usr/bin/env python3
"""Injection benchmark driver: plants corpus payloads in everyday files, reads
them and benign trees through `moat serve` over stdio (read_file, the real
path), and prints recall per family and false-alarm rates per level.

Usage: driver.py --moat BIN --samples samples.json --work DIR
                 [--negatives NAME=TREE[:LIMIT] ...] [--misses FILE]
"""

import argparse
import collections
import json
import os
import random
import subprocess
import sys
from pathlib import Path

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "moat-bench", "version": "0"},
}
RANK = {"none": 0, "low": 1, "elevated": 2, "high": 3}


class Moat:
    def __init__(self, binary, tree):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent",
               "MOAT_SANDBOX__MODE": os.environ.get("MOAT_SANDBOX__MODE", "confined"),
               "MOAT_OBSERVABILITY__LOG_LEVEL": "warning"}
        self.proc = subprocess.Popen([binary, "serve", "--workspace", str(tree)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.next_id = 1

    def read(self, rel):
        """(level, signal ids, summary text) or None when moat refuses the file."""
        req = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
               "params": {"name": "read_file", "arguments": {"path": rel}, "_meta": MODERN_META}}
        self.next_id += 1
        self.proc.stdin.write((json.dumps(req) + "\n").encode())
        self.proc.stdin.flush()
        r = json.loads(self.proc.stdout.readline())
        if "error" in r or r["result"].get("isError"):
            return None
        a = r["result"]["structuredContent"]["content_assessment"]
        signals = [(s["signal"], s["context"]) for s in a["signals"]]
        return a["level"], signals, r["result"]["content"][0]["text"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def comment_block(text, prefix):
    return "\n".join((prefix + line).rstrip() for line in text.splitlines())


# Everyday files of nine kinds, each with the payload where an attacker who can
# only contribute content would put it.
def plant(kind, text):
    if kind == "py":
        return ("import os\n\n\n" + comment_block(text, "# ") +
                "\ndef load(path):\n    with open(path) as f:\n        return f.read()\n")
    if kind == "js":
        return ("'use strict';\n\n" + comment_block(text, "// ") +
                "\nfunction load(path) {\n  return fs.readFileSync(path, 'utf8');\n}\n")
    if kind == "c":
        return ("#include <stdio.h>\n\n/*\n" + comment_block(text, " * ") +
                "\n */\nint main(void)\n{\n\treturn 0;\n}\n")
    if kind == "rs":
        return ("use std::fs;\n\n" + comment_block(text, "/// ") +
                "\npub fn load(path: &str) -> String {\n    fs::read_to_string(path).unwrap_or_default()\n}\n")
    if kind == "go":
        return ("package util\n\nimport \"os\"\n\n" + comment_block(text, "// ") +
                "\nfunc Load(path string) ([]byte, error) {\n\treturn os.ReadFile(path)\n}\n")
    if kind == "md":
        return ("# Project notes\n\nThis module loads configuration files.\n\n" + text +
                "\n\n## Usage\n\nRun `make` to build.\n")
    if kind == "yaml":
        body = "\n".join("  " + line for line in text.splitlines())
        return "name: loader\nversion: 1.2.0\ndescription: |\n" + body + "\nlicense: MIT\n"
    if kind == "json":
        return json.dumps({"name": "loader", "version": "1.2.0", "description": text,
                           "license": "MIT"}, indent=2, ensure_ascii=False) + "\n"
    if kind == "html":
        return ("<!doctype html>\n<html>\n<head><title>Loader</title></head>\n<body>\n"
                "<h1>Loader</h1>\n<p>\n" + text + "\n</p>\n</body>\n</html>\n")
    raise ValueError(kind)


KINDS = ["py", "js", "c", "rs", "go", "md", "yaml", "json", "html"]


def pct(n, d):
    return f"{100.0 * n / d:5.1f}%" if d else "   n/a"


def positives(binary, samples, work, misses_out):
    root = work / "positives"
    root.mkdir(parents=True, exist_ok=True)
    planted = []
    for i, sample in enumerate(samples):
        for kind in KINDS:
            rel = f"p{i:04d}.{kind}"
            (root / rel).write_text(plant(kind, sample["text"]))
            planted.append((rel, sample, kind))
    moat = Moat(binary, root)
    by_family = collections.defaultdict(lambda: [0, 0, 0, 0])  # files, >=elevated, high, warned
    by_kind = collections.defaultdict(lambda: [0, 0, 0, 0])
    contexts = collections.Counter()
    misses = []
    for rel, sample, kind in planted:
        got = moat.read(rel)
        level, signals, summary = got if got else ("refused", [], "")
        rank = RANK.get(level, -1)
        warned = summary.count("\nWarning: prompt-injection risk") == 1
        for table, key in ((by_family, sample["family"]), (by_kind, kind)):
            row = table[key]
            row[0] += 1
            row[1] += rank >= 2
            row[2] += rank >= 3
            row[3] += warned == (rank >= 2)
        for _, context in signals:
            contexts[(kind, context)] += 1
        if rank < 3:
            misses.append({"family": sample["family"], "kind": kind, "level": level,
                           "signals": sorted({s for s, _ in signals}), "text": sample["text"]})
    moat.close()
    total = [sum(r[i] for r in by_family.values()) for i in range(4)]
    print(f"\npositives: {len(samples)} payloads x {len(KINDS)} file kinds = {total[0]} files")
    print(f"{'family':<44} {'files':>5} {'>=elevated':>10} {'high':>7}")
    for family, row in sorted(by_family.items()):
        print(f"{family:<44} {row[0]:>5} {pct(row[1], row[0]):>10} {pct(row[2], row[0]):>7}")
    print(f"{'ALL':<44} {total[0]:>5} {pct(total[1], total[0]):>10} {pct(total[2], total[0]):>7}")
    print(f"\n{'file kind':<12} {'files':>5} {'>=elevated':>10} {'high':>7}")
    for kind in KINDS:
        row = by_kind[kind]
        print(f"{kind:<12} {row[0]:>5} {pct(row[1], row[0]):>10} {pct(row[2], row[0]):>7}")
    print(f"\nwarning line present exactly when >= elevated: {total[3]}/{total[0]} files")
    print("finding contexts by file kind: " + ", ".join(
        f"{k}:{c}={n}" for (k, c), n in sorted(contexts.items())))
    if misses_out:
        Path(misses_out).write_text(json.dumps(misses, indent=1, ensure_ascii=False))


def text_files(tree, limit, rng):
    files = []
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            try:
                if not path.is_file() or path.is_symlink() or path.stat().st_size == 0:
                    continue
                with open(path, "rb") as f:
                    head = f.read(4096)
            except OSError:
                continue
            if b"\0" in head:
                continue
            files.append(str(path.relative_to(tree)))
    if limit and len(files) > limit:
        files = sorted(rng.sample(files, limit))
    return files


def negatives(binary, name, tree, limit, rng, alarms_out):
    files = text_files(tree, limit, rng)
    moat = Moat(binary, tree)
    levels = collections.Counter()
    alarms = []
    for rel in files:
        got = moat.read(rel)
        if got is None:
            levels["refused"] += 1
            continue
        level, signals, _ = got
        levels[level] += 1
        if RANK[level] >= 2:
            alarms.append({"tree": name, "path": rel, "level": level, "signals": signals})
    moat.close()
    read = sum(n for level, n in levels.items() if level != "refused")
    at_least = lambda r: sum(n for level, n in levels.items() if RANK.get(level, -1) >= r)
    print(f"{name:<10} {read:>6} {levels['refused']:>7} {pct(at_least(1), read):>8} "
          f"{pct(at_least(2), read):>10} {pct(at_least(3), read):>7}")
    return read, at_least(2), at_least(3), alarms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--moat", required=True)
    ap.add_argument("--samples", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--negatives", action="append", default=[])
    ap.add_argument("--misses")
    ap.add_argument("--alarms")
    a = ap.parse_args()
    samples = json.loads(Path(a.samples).read_text())
    rng = random.Random(16)
    positives(a.moat, samples, Path(a.work), a.misses)
    if a.negatives:
        print(f"\nnegatives (benign files read whole; rates of files read)")
        print(f"{'tree':<10} {'files':>6} {'refused':>7} {'>=low':>8} {'>=elevated':>10} {'high':>7}")
        totals = [0, 0, 0]
        alarms = []
        for spec in a.negatives:
            name, rest = spec.split("=", 1)
            tree, _, limit = rest.partition(":")
            read, elevated, high, found = negatives(a.moat, name, Path(tree), int(limit or 0), rng, a.alarms)
            totals = [totals[0] + read, totals[1] + elevated, totals[2] + high]
            alarms += found
        print(f"{'ALL':<10} {totals[0]:>6} {'':>7} {'':>8} {pct(totals[1], totals[0]):>10} {pct(totals[2], totals[0]):>7}")
        for alarm in alarms:
            print(f"  alarm: {alarm['tree']}/{alarm['path']} {alarm['level']} {alarm['signals']}")


if __name__ == "__main__":
    main()
