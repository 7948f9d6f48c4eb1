#!/usr/bin/env python3
"""Benign corpora for the injection benchmark: documentation and source.

Lists the files of each corpus with its kind (`doc` or `src`) and a split:
about 30% of each corpus (by a hash of the path) is `held` and never looked
at while tuning the scanner; the rest is `tune`. Writes a JSON manifest
{corpus: {"root": DIR, "files": [[path, kind, split], ...]}} to stdout.

Corpora (each a directory given on the command line as NAME=DIR):

* `linux`: the Linux tree; `Documentation/` (reStructuredText and text) is
  documentation, `.c`/`.h` files elsewhere are source (sampled);
* `crates`: the crates of a cargo registry: READMEs, CHANGELOGs and other
  Markdown are documentation, `.rs` files are source (sampled);
* `pypi`: source distributions of PyPI packages unpacked: Markdown,
  reStructuredText and text files (READMEs, CHANGES, docs/ guides) are
  documentation, `.py` files are source (sampled);
* `npm`: npm packages unpacked: Markdown (READMEs, CHANGELOGs, docs) is
  documentation, `.js`/`.ts` files are source (sampled).

Usage: benign.py [--src-limit N] NAME=DIR ...
"""

import argparse
import hashlib
import json
import os
import random
from pathlib import Path

HELD_PERCENT = 30
DOC_EXT = {".md", ".markdown", ".rst", ".txt", ".adoc"}
SRC_EXT = {".c", ".h", ".rs", ".py", ".js", ".mjs", ".cjs", ".ts", ".go"}
DOC_NAMES = ("readme", "changelog", "changes", "history", "news", "contributing", "authors",
             "install", "upgrading", "migration", "security", "code_of_conduct")


def split_of(corpus, path):
    digest = hashlib.sha1(f"{corpus}\0{path}".encode()).digest()
    return "held" if digest[0] * 100 // 256 < HELD_PERCENT else "tune"


def kind_of(corpus, rel):
    name = rel.rsplit("/", 1)[-1].lower()
    ext = os.path.splitext(name)[1]
    if corpus == "linux":
        if rel.startswith("Documentation/") and (ext in DOC_EXT or "." not in name):
            return "doc"
        return "src" if ext in {".c", ".h"} else None
    if ext in DOC_EXT or (("." not in name) and name.startswith(DOC_NAMES)):
        # Licence texts and data files named .txt are not guides.
        if name.startswith(("license", "licence", "copying", "notice")) or "requirements" in name:
            return None
        return "doc"
    if ext in SRC_EXT and "min." not in name:
        return "src"
    return None


def listing(corpus, root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "node_modules")
        for name in sorted(filenames):
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            kind = kind_of(corpus, rel)
            if kind is None:
                continue
            try:
                if path.is_symlink() or not path.is_file():
                    continue
                size = path.stat().st_size
                if size == 0 or size > 1_000_000:
                    continue
                with open(path, "rb") as f:
                    if b"\0" in f.read(4096):
                        continue
            except OSError:
                continue
            out.append((rel, kind))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src-limit", type=int, default=2500)
    ap.add_argument("--doc-limit", type=int, default=4000)
    ap.add_argument("corpora", nargs="+")
    a = ap.parse_args()
    rng = random.Random(39)
    manifest = {}
    for spec in a.corpora:
        name, root = spec.split("=", 1)
        files = listing(name, root)
        picked = []
        for kind, limit in (("doc", a.doc_limit), ("src", a.src_limit)):
            these = [f for f in files if f[1] == kind]
            if limit and len(these) > limit:
                these = sorted(rng.sample(these, limit))
            picked += these
        manifest[name] = {"root": str(root),
                          "files": [[rel, kind, split_of(name, rel)] for rel, kind in picked]}
    json.dump(manifest, __import__("sys").stdout, indent=0)


if __name__ == "__main__":
    main()
