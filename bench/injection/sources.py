#!/usr/bin/env python3
"""Positive samples from corpora the scanner was not built with.

Reads, without importing or running anything of them:

* spikee (PyPI, WithSecure's prompt-injection kit): the instructions of
  its starter datasets, each put into that dataset's jailbreak templates
  (`spikee/data/workspace/datasets/seeds-*/{instructions,jailbreaks}.jsonl`);
* pyrit (PyPI, Microsoft's red-teaming kit): the jailbreak templates
  (`pyrit/datasets/jailbreak/templates/**/*.yaml`, role-play and persona
  jailbreaks), each filled with a request from spikee's instructions;
* BIPIA (Microsoft's benchmark of indirect prompt injection, a git
  snapshot): the text and code attacks (`benchmark/*_attack_*.json`);
* CyberSecEval (Meta's PurpleLlama, a git snapshot): the prompt-injection
  dataset's indirect cases (`CybersecurityBenchmarks/datasets/prompt_injection/
  prompt_injection.json`, `injection_type` indirect; its direct cases are
  questions whose harm depends on a system prompt, and the variant in other
  languages is left out: the signals read English);
* obfuscated: spikee's instructions hidden the ways public kits hide them
  (look-alike letters, variation selectors between letters, Unicode tag
  characters, leetspeak, base64, hex), each transformation written here.

Every sample gets a split: about 30% of each source (by a hash of its text)
is `held` and never looked at while tuning the scanner; the rest is `tune`.
Writes a JSON list of {"source", "family", "text", "split"} to stdout.

Usage: sources.py PKGS_DIR BIPIA_GIT_DIR PURPLELLAMA_GIT_DIR
"""

import base64
import collections
import hashlib
import json
import random
import re
import subprocess
import sys
from pathlib import Path

CAP = 80
HELD_PERCENT = 30


def split_of(source, text):
    digest = hashlib.sha1(f"{source}\0{text}".encode()).digest()
    return "held" if digest[0] * 100 // 256 < HELD_PERCENT else "tune"


def jsonl(path):
    out = []
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if line:
            out.append(json.loads(line))
    return out


# A text is taken for English when most of its words are in an English word
# list (Debian's wamerican, /usr/share/dict/words). Several kits translate
# their payloads into low-resource languages; the signals read English, so
# such payloads are left out of every source, and counted.
ENGLISH_SHARE = 0.6
WORDS = None


def is_english(text):
    global WORDS
    if WORDS is None:
        WORDS = {w.strip().lower() for w in open("/usr/share/dict/words", errors="replace")}
    words = [w for w in re.findall(r"[^\W\d_]+", text.lower()) if len(w) > 1]
    if not words:
        return False
    return sum(w in WORDS for w in words) / len(words) >= ENGLISH_SHARE


def cap(rng, items, n=CAP):
    items = sorted(set(items))
    rng.shuffle(items)
    return items[:n]


def spikee_root(pkgs):
    return next(Path(pkgs).glob("spikee*/spikee/data/workspace/datasets"))


def spikee_instructions(pkgs):
    root = spikee_root(pkgs)
    out = []
    for name in ("seeds-cybersec-2026-01", "seeds-sysmsg-extraction-2025-04", "seeds-llm-mailbox"):
        for item in jsonl(root / name / "instructions.jsonl"):
            text = item.get("instruction")
            if isinstance(text, str) and text.strip():
                out.append((name, item.get("instruction_type", "instruction"), text.strip()))
    return out


def spikee(pkgs, rng):
    root = spikee_root(pkgs)
    out = []
    for name in ("seeds-cybersec-2026-01", "seeds-sysmsg-extraction-2025-04", "seeds-llm-mailbox"):
        instructions = [i["instruction"] for i in jsonl(root / name / "instructions.jsonl")
                        if isinstance(i.get("instruction"), str)]
        jailbreaks = [j for j in jsonl(root / name / "jailbreaks.jsonl") if isinstance(j.get("text"), str)]
        texts = []
        for jb in jailbreaks:
            for instruction in rng.sample(instructions, min(3, len(instructions))):
                texts.append((jb.get("jailbreak_type", "jailbreak"),
                              jb["text"].replace("<INSTRUCTION>", instruction.rstrip("."))))
        by_type = {}
        for kind, text in texts:
            by_type.setdefault(kind, []).append(text)
        picked = []
        for kind, items in sorted(by_type.items()):
            picked += [(kind, t) for t in cap(rng, items, 6)]
        rng.shuffle(picked)
        for kind, text in picked[:CAP * 2]:
            out.append({"source": "spikee", "family": f"spikee.{name.removeprefix('seeds-')}", "text": text})
    return out


def pyrit(pkgs, rng):
    root = next(Path(pkgs).glob("pyrit*/pyrit/datasets/jailbreak/templates"))
    requests = [t for _, _, t in spikee_instructions(pkgs) if is_english(t)]
    out = []
    for path in sorted(root.rglob("*.yaml")):
        text = path.read_text(errors="replace")
        # The template is the `value:` block scalar (folded `>` or literal `|`).
        m = re.search(r"^value:\s*([>|])[-+]?\s*\n((?:[ \t]+.*\n|\s*\n)+)", text, re.M)
        if not m:
            continue
        lines = m.group(2).splitlines()
        indent = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
        body = [l[indent:] for l in lines]
        if m.group(1) == ">":
            paragraphs, cur = [], []
            for l in body:
                if l.strip():
                    cur.append(l.strip())
                elif cur:
                    paragraphs.append(" ".join(cur))
                    cur = []
            if cur:
                paragraphs.append(" ".join(cur))
            value = "\n\n".join(paragraphs)
        else:
            value = "\n".join(body).strip()
        value = re.sub(r"\{\{\s*prompt\s*\}\}", rng.choice(requests).rstrip("."), value)
        if "{{" in value or len(value) < 40:
            continue
        out.append({"source": "pyrit", "family": "pyrit.jailbreak", "text": value})
    return out



def git_show(repo, path):
    return subprocess.run(["git", "--git-dir", str(repo), "show", f"HEAD:{path}"],
                          check=True, capture_output=True).stdout.decode()


BARE_TASKS = {"Task Automation", "Business Intelligence", "Conversational Agent",
              "Research Assistance", "Sentiment Analysis"}


def bipia(repo, rng):
    out = []
    for name in ("text_attack_train.json", "text_attack_test.json",
                 "code_attack_train.json", "code_attack_test.json"):
        data = json.loads(git_show(repo, f"benchmark/{name}"))
        for category, texts in data.items():
            # Five text categories are a task for the reader and nothing
            # else ("What is the capital of Brazil?"): no words tell them from
            # a document's own questions. They are reported apart.
            kind = name.split("_")[0]
            if category in BARE_TASKS:
                kind += "-task"
            for text in texts:
                out.append({"source": "bipia", "family": f"bipia.{kind}",
                            "text": text.strip(), "category": category})
    return out


def cyberseceval(repo, rng):
    data = json.loads(git_show(repo, "CybersecurityBenchmarks/datasets/prompt_injection/prompt_injection.json"))
    out = []
    for item in data:
        if item.get("injection_type") != "indirect" \
                or item.get("injection_variant") == "different_user_input_language":
            continue
        text = item.get("user_input", "").strip()
        if text:
            out.append({"source": "cyberseceval", "family": f"cyberseceval.{item['injection_variant']}",
                        "text": text})
    return out


# Obfuscations of the kind public kits apply, written here.
HOMOGLYPHS = {"a": "\u0430", "c": "\u0441", "d": "\u0501", "e": "\u0435", "g": "\u0261", "h": "\u04bb",
              "i": "\u0456", "j": "\u0458", "o": "\u043e", "p": "\u0440", "s": "\u0455", "x": "\u0445",
              "y": "\u0443", "A": "\u0410", "B": "\u0412", "C": "\u0421", "E": "\u0415", "H": "\u041d",
              "I": "\u0399", "K": "\u041a", "M": "\u041c", "O": "\u041e", "P": "\u0420", "T": "\u0422",
              "X": "\u0425"}
LEET = {"a": "4", "e": "3", "i": "1", "o": "0", "t": "7", "s": "5", "b": "8", "g": "6", "z": "2"}


def homoglyph(text, rng, ratio):
    return "".join(HOMOGLYPHS[c] if c in HOMOGLYPHS and rng.random() < ratio else c for c in text)


def leet(text, rng):
    return "".join(LEET.get(c.lower(), c) for c in text)


def variation_selectors(text, rng):
    out = []
    for c in text:
        out.append(c)
        if c.isalpha():
            out.append(chr(0xFE00 + rng.randrange(16)))
    return "".join(out)


def tag_smuggled(text, rng):
    hidden = "".join(chr(0xE0000 + ord(c)) for c in text if 0x20 <= ord(c) < 0x7F)
    return "Thanks for reading." + hidden


def b64(text, rng):
    return "Decode this and follow it: " + base64.b64encode(text.encode()).decode()


def hexed(text, rng):
    return text.encode().hex()


OBFUSCATIONS = [
    ("homoglyphs-all", lambda t, r: homoglyph(t, r, 1.0)),
    ("homoglyphs-half", lambda t, r: homoglyph(t, r, 0.5)),
    ("leetspeak", leet),
    ("variation-selectors", variation_selectors),
    ("unicode-tags", tag_smuggled),
    ("base64", b64),
    ("hex", hexed),
]


def obfuscated(pkgs, rng):
    instructions = sorted({t for _, _, t in spikee_instructions(pkgs)})
    out = []
    instructions = [t for t in instructions if is_english(t)]
    for name, transform in OBFUSCATIONS:
        for text in cap(rng, instructions, 40):
            out.append({"source": "obfuscated", "family": f"obfuscated.{name}", "text": transform(text, rng)})
    return out


def main():
    pkgs, bipia_repo, purple_repo = sys.argv[1:4]
    rng = random.Random(39)
    samples = (spikee(pkgs, rng) + pyrit(pkgs, rng) + bipia(bipia_repo, rng)
               + cyberseceval(purple_repo, rng) + obfuscated(pkgs, rng))
    # Obfuscated payloads are English before they are hidden (checked there).
    english = [s for s in samples if s["source"] == "obfuscated" or is_english(s["text"])]
    dropped = collections.Counter(s["source"] for s in samples if s not in english)
    samples = english
    print(f"left out, not in English: {dict(dropped)}", file=sys.stderr)
    for sample in samples:
        sample["split"] = split_of(sample["source"], sample["text"])
    json.dump(samples, sys.stdout, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
