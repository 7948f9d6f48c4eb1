#!/usr/bin/env python3
"""Injection benchmark on corpora the scanner was not built with.

Positives (from sources.py) are planted in everyday carriers twice: as the
corpus wrote them (`line`: each paragraph on one line) and wrapped at 72
columns the way comments, docstrings and documentation are (`wrapped`).
Benign corpora (from benign.py) are read as they are. Everything is read
through `moat serve` over stdio with `read_file`. Every table is printed
for the `tune` split and, separately, for the `held` split, which is never
looked at while tuning.

Usage: unseen.py --moat BIN --samples new-samples.json --manifest benign.json
                 --work DIR [--split tune|held|both] [--misses FILE] [--alarms FILE]
"""

import argparse
import collections
import json
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from driver import RANK, Moat, pct  # noqa: E402

WIDTH = 72


def wrap(text, width):
    out = []
    for paragraph in text.split("\n"):
        if not paragraph.strip():
            out.append("")
            continue
        out += textwrap.wrap(paragraph, width=width, break_long_words=False,
                             break_on_hyphens=False) or [""]
    return "\n".join(out)


def prefixed(text, prefix):
    return "\n".join((prefix + line).rstrip() for line in text.split("\n"))


# Carriers: (name, comment prefix or None, builder of the file).
def carriers():
    return {
        "py": ("# ", lambda body: "import os\n\n\n" + body + "\ndef load(path):\n    return open(path).read()\n"),
        "py-docstring": ("    ", lambda body: "def load(path):\n    \"\"\"Load the file.\n\n" + body +
                         "\n    \"\"\"\n    return open(path).read()\n"),
        "js": ("// ", lambda body: "'use strict';\n\n" + body + "\nfunction load(p) {\n  return fs.readFileSync(p);\n}\n"),
        "c": (" * ", lambda body: "#include <stdio.h>\n\n/*\n" + body + "\n */\nint main(void)\n{\n\treturn 0;\n}\n"),
        "rs": ("/// ", lambda body: "use std::fs;\n\n" + body + "\npub fn load(p: &str) -> String {\n    fs::read_to_string(p).unwrap_or_default()\n}\n"),
        "go": ("// ", lambda body: "package util\n\n" + body + "\nfunc Load() {}\n"),
        "md": ("", lambda body: "# Project notes\n\nThis module loads configuration files.\n\n" + body + "\n\n## Usage\n\nRun `make` to build.\n"),
        "md-quote": ("> ", lambda body: "# Review\n\nA reader wrote:\n\n" + body + "\n\nThanks.\n"),
        "rst": ("", lambda body: "Loader\n======\n\nThis module loads configuration files.\n\n" + body + "\n\nUsage\n-----\n\nRun ``make``.\n"),
        "yaml": ("  ", lambda body: "name: loader\nversion: 1.2.0\ndescription: |\n" + body + "\nlicense: MIT\n"),
        "html": ("", lambda body: "<!doctype html>\n<html>\n<body>\n<p>\n" + body + "\n</p>\n</body>\n</html>\n"),
    }


EXT = {"py": "py", "py-docstring": "py", "js": "js", "c": "c", "rs": "rs", "go": "go", "md": "md",
       "md-quote": "md", "rst": "rst", "yaml": "yaml", "html": "html", "json": "json"}


def plant(carrier, text, wrapped):
    if carrier == "json":
        return json.dumps({"name": "loader", "description": text}, indent=2, ensure_ascii=False) + "\n"
    prefix, build = carriers()[carrier]
    if wrapped:
        text = wrap(text, WIDTH - len(prefix))
    return build(prefixed(text, prefix))


def positives(binary, samples, work, split, misses_out):
    root = work / "positives"
    root.mkdir(parents=True, exist_ok=True)
    names = list(carriers()) + ["json"]
    planted = []
    for i, sample in enumerate(samples):
        if split != "both" and sample["split"] != split:
            continue
        for carrier in names:
            for wrapped in (False, True):
                if wrapped and carrier == "json":
                    continue
                rel = f"p{i:05d}-{carrier}-{'w' if wrapped else 'l'}.{EXT[carrier]}"
                (root / rel).write_text(plant(carrier, sample["text"], wrapped))
                planted.append((rel, sample, carrier, wrapped))
    moat = Moat(binary, root)
    rows = collections.defaultdict(lambda: [0, 0, 0])
    misses = []
    for rel, sample, carrier, wrapped in planted:
        got = moat.read(rel)
        level = got[0] if got else "refused"
        rank = RANK.get(level, -1)
        form = "wrapped" if wrapped else "line"
        for key in ((sample["split"], sample["source"], form), (sample["split"], "ALL", form),
                    (sample["split"], "family:" + sample["family"], form),
                    (sample["split"], "carrier:" + carrier, form)):
            rows[key][0] += 1
            rows[key][1] += rank >= 2
            rows[key][2] += rank >= 3
        if rank < 2 and sample["split"] == "tune":
            misses.append({"family": sample["family"], "carrier": carrier, "form": form,
                           "level": level, "signals": sorted({s for s, _ in got[1]}) if got else [],
                           "text": sample["text"]})
    moat.close()
    for which in ("tune", "held"):
        keys = sorted(k for k in rows if k[0] == which)
        if not keys:
            continue
        print(f"\npositives, {which} split (>=elevated / high), one line vs wrapped at {WIDTH} columns")
        print(f"{'source':<44} {'files':>6} {'line >=el':>9} {'high':>6} {'wrap >=el':>9} {'high':>6}")
        labels = sorted({k[1] for k in keys}, key=lambda s: (s.startswith(("family:", "carrier:")), s))
        for label in labels:
            line, wrapped = rows.get((which, label, "line"), [0, 0, 0]), rows.get((which, label, "wrapped"), [0, 0, 0])
            print(f"{label:<44} {line[0] + wrapped[0]:>6} {pct(line[1], line[0]):>9} {pct(line[2], line[0]):>6} "
                  f"{pct(wrapped[1], wrapped[0]):>9} {pct(wrapped[2], wrapped[0]):>6}")
    if misses_out:
        Path(misses_out).write_text(json.dumps(misses, indent=1, ensure_ascii=False))


def negatives(binary, manifest, split, alarms_out):
    print(f"\nbenign corpora: files at >=elevated and at high, by corpus, kind and split")
    print(f"{'corpus':<10} {'kind':<5} {'split':<5} {'files':>6} {'refused':>7} {'>=elevated':>10} {'high':>8}")
    alarms = []
    totals = collections.defaultdict(lambda: [0, 0, 0])
    for name, corpus in manifest.items():
        moat = Moat(binary, corpus["root"])
        counts = collections.defaultdict(lambda: [0, 0, 0, 0])
        for rel, kind, which in corpus["files"]:
            if split != "both" and which != split:
                continue
            got = moat.read(rel)
            row = counts[(kind, which)]
            if got is None:
                row[1] += 1
                continue
            level, signals, _ = got
            row[0] += 1
            row[2] += RANK[level] >= 2
            row[3] += RANK[level] >= 3
            if RANK[level] >= 2 and which == "tune":
                alarms.append({"corpus": name, "path": rel, "kind": kind, "level": level, "signals": signals})
        moat.close()
        for (kind, which), row in sorted(counts.items()):
            print(f"{name:<10} {kind:<5} {which:<5} {row[0]:>6} {row[1]:>7} "
                  f"{pct(row[2], row[0]):>10} {pct(row[3], row[0]):>8}  ({row[2]}/{row[3]})")
            total = totals[(kind, which)]
            total[0] += row[0]
            total[1] += row[2]
            total[2] += row[3]
    for (kind, which), total in sorted(totals.items()):
        print(f"{'ALL':<10} {kind:<5} {which:<5} {total[0]:>6} {'':>7} {pct(total[1], total[0]):>10} "
              f"{pct(total[2], total[0]):>8}  ({total[1]}/{total[2]})")
    if alarms_out:
        Path(alarms_out).write_text(json.dumps(alarms, indent=1, ensure_ascii=False))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--moat", required=True)
    ap.add_argument("--samples")
    ap.add_argument("--manifest")
    ap.add_argument("--work", required=True)
    ap.add_argument("--split", default="both", choices=["tune", "held", "both"])
    ap.add_argument("--misses")
    ap.add_argument("--alarms")
    a = ap.parse_args()
    work = Path(a.work)
    if a.samples:
        positives(a.moat, json.loads(Path(a.samples).read_text()), work, a.split, a.misses)
    if a.manifest:
        negatives(a.moat, json.loads(Path(a.manifest).read_text()), a.split, a.alarms)


if __name__ == "__main__":
    main()
