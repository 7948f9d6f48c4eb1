#!/usr/bin/env python3
"""git_show's totals against git's on every non-merge commit of a real repository.

For each non-merge commit reachable from HEAD, `git_show` (stat only) must
report the files, insertions and deletions `git show --numstat` reports
(git's default rename detection). Files the denylist withholds are counted
apart by moat (`withheld_by_denylist`, with no line counts): such a commit
is compared on its file count alone, and listed.

With `--minimal` the reference is `git show --numstat --minimal`: the
smallest line diff, whose totals are fixed by the two texts alone (git's
default gives up on the smallest diff where finding it is costly, so its
totals depend on its heuristics).

Usage: git_stat_check.py --moat BINARY --repo DIR [--max 1000] [--minimal]
Standard library only.
"""

import argparse
import json
import os
import subprocess
import sys

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "moat-bench", "version": "0"},
}


def git_numstat(repo, sha, extra):
    out = subprocess.run(["git", "-C", repo, "show", "--numstat", "--format=", *extra, sha],
                         capture_output=True, text=True, check=True).stdout
    files = added = removed = 0
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) < 3:
            continue
        files += 1
        if parts[0] != "-":
            added += int(parts[0])
            removed += int(parts[1])
    return files, added, removed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--moat", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--max", type=int, default=1000)
    ap.add_argument("--no-redaction", action="store_true",
                    help="serve with redaction off (diffs of the raw sides)")
    ap.add_argument("--minimal", action="store_true",
                    help="compare with `git show --minimal` (the smallest diff) instead of git's default")
    a = ap.parse_args()
    shas = subprocess.run(["git", "-C", a.repo, "rev-list", "--no-merges", f"--max-count={a.max}", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.split()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent",
           "MOAT_OBSERVABILITY__LOG_LEVEL": "warning"}
    if a.no_redaction:
        env["MOAT_SECURITY__REDACT_SECRETS"] = "false"
    proc = subprocess.Popen([a.moat, "serve", "--workspace", a.repo], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    equal = withheld = 0
    differ = []
    for i, sha in enumerate(shas):
        req = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
               "params": {"name": "git_show", "arguments": {"revision": sha, "stat_only": True}, "_meta": META}}
        proc.stdin.write(json.dumps(req) + "\n")
        proc.stdin.flush()
        s = json.loads(proc.stdout.readline())["result"].get("structuredContent", {})
        want = git_numstat(a.repo, sha, ["--minimal"] if a.minimal else [])
        hidden = s.get("withheld_by_denylist", 0)
        got = (s.get("files_changed", 0) + hidden, s.get("lines_added"), s.get("lines_removed"))
        if hidden:
            withheld += 1
            ok = got[0] == want[0]
        else:
            ok = got == want
        if ok:
            equal += 1
        else:
            differ.append((sha[:12], got, want))
    proc.stdin.close()
    proc.wait(timeout=30)
    which = "git --minimal" if a.minimal else "git's default"
    print(f"{a.repo}: {len(shas)} non-merge commits; totals equal to {which} on {equal}/{len(shas)} "
          f"({withheld} with files the denylist withholds, compared by file count)")
    for sha, got, want in differ[:20]:
        print(f"  {sha}: moat {got} git {want}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
