#!/usr/bin/env python3
"""search_code against ripgrep, side by side, in one run.

Starts `moat serve` once over stdio (the real path an editor uses), warms
it, then for each pattern alternates one ripgrep run and one `tools/call`
round trip, REPS times, and prints medians, spread and moat/rg.

Standard library only. Called by bench/search.sh, which prepares the tree,
ripgrep and the release binary; see bench/README.md.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "moat-bench", "version": "0"},
}

# moat's generated-tree skip list (worker/src/fs/skiplist.rs) and denylist
# (worker/src/fs/denylist.rs), as ripgrep globs.
SKIPPED_DIRS = [
    ".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__",
    ".mypy_cache", ".ruff_cache", ".pytest_cache", ".tox", ".nox", "dist",
    "build", ".next", ".nuxt", "target", "vendor", ".terraform", ".gradle",
    ".idea", ".vscode", "site-packages", "htmlcov", ".coverage",
]
DENIED_NAMES = [
    ".env", ".envrc", ".netrc", "_netrc", ".pgpass", ".htpasswd",
    ".git-credentials", ".npmrc", ".pypirc", "credentials", "credentials.json",
    "service-account.json", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519",
    "known_hosts", "secring.gpg", "shadow",
]
DENIED_PATTERNS = [
    ".env.*", "*.pem", "*.key", "*.pfx", "*.p12", "*.jks", "*.keystore",
    "*.kdbx", "*.ppk", "*.asc", "*_rsa", "*_ed25519", "*.tfstate",
    "*.tfstate.backup",
]
DENIED_DIRS = [".ssh", ".aws", ".azure", ".gnupg", ".kube", ".docker",
               "**/.config/gcloud", "**/node_modules/.cache"]

# (label, pattern, regex, case_sensitive)
PATTERNS = [
    ("rare literal", "ftrace_graph_caller", False, False),
    ("common literal", "return", False, False),
    ("case-insensitive regex", r"spin_(un)?lock_irq(save|restore)?", True, False),
    ("regex with a class", r"\bu(8|16|32|64) [a-z_]+\[[A-Z_]+\]", True, True),
]


def walk_globs():
    """ripgrep globs that prune what moat's walk prunes: the skip list of
    generated trees and the denylist."""
    argv = []
    for d in SKIPPED_DIRS:
        argv += ["--glob", f"!{d}/"]
    for n in DENIED_NAMES + DENIED_PATTERNS:
        argv += ["--iglob", f"!{n}"]
    for d in DENIED_DIRS:
        argv += ["--iglob", f"!{d}/"]
    return argv


def rg_argv(rg, tree, pattern, regex, case_sensitive, count):
    """ripgrep with moat's search semantics."""
    argv = [rg, "--no-config", "--no-messages",
            "--hidden",                   # moat does not skip dot files
            # .gitignore only inside a git repository, like moat (ripgrep's
            # default: no --no-require-git)
            "--no-ignore-parent",         # ... only inside the workspace
            "--no-ignore-global",         # ... never the user's global one
            "--line-number", "--with-filename", "--no-heading", "--color", "never"]
    if count:
        argv.append("--count")
    if not case_sensitive:
        argv.append("--ignore-case")
    if not regex:
        argv.append("--fixed-strings")
    argv += walk_globs()
    argv += ["--regexp", pattern, tree]
    return argv


def run_rg(argv):
    """Run ripgrep with its output on a pipe (not /dev/null, where ripgrep
    stops at the first match), read all of it; (seconds, lines)."""
    t = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    dt = time.perf_counter() - t
    if p.returncode not in (0, 1):
        sys.exit(f"ripgrep failed ({p.returncode}): {' '.join(argv[:12])} ...")
    return dt, p.stdout.count(b"\n"), p.stdout


class Moat:
    def __init__(self, binary, tree, env):
        full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent"}
        full_env.update(env)
        self.proc = subprocess.Popen(
            [binary, "serve", "--workspace", tree],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=full_env)  # buffered: an unbuffered readline reads a byte per syscall
        self.next_id = 1

    def call(self, tool, args):
        """One tools/call round trip: (seconds, parsed result)."""
        req = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
               "params": {"name": tool, "arguments": args, "_meta": MODERN_META}}
        self.next_id += 1
        line = (json.dumps(req) + "\n").encode()
        t = time.perf_counter()
        self.proc.stdin.write(line)
        self.proc.stdin.flush()
        resp = self.proc.stdout.readline()
        dt = time.perf_counter() - t
        r = json.loads(resp)
        if "error" in r:
            sys.exit(f"moat refused {tool} {args}: {r['error']}")
        if r["result"].get("isError"):
            sys.exit(f"moat failed {tool} {args}: {r['result']['structuredContent']}")
        return dt, r["result"]["structuredContent"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def spread(xs):
    q = statistics.quantiles(xs, n=4) if len(xs) >= 4 else [min(xs), 0, max(xs)]
    return q[0], q[2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--moat", required=True)
    ap.add_argument("--rg", required=True)
    ap.add_argument("--tree", required=True)
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--max-results", type=int, default=500)
    ap.add_argument("--moat-alt", help="an earlier moat binary, timed interleaved "
                    "with --moat on every pattern (prints moat/alt)")
    a = ap.parse_args()

    env = {
        "MOAT_SANDBOX__MODE": os.environ.get("MOAT_SANDBOX__MODE", "confined"),
        "MOAT_SANDBOX__MAX_SEARCH_RESULTS": "1000",
        "MOAT_SANDBOX__MAX_RESULT_BYTES": "8388608",
        "MOAT_SANDBOX__MAX_SEARCH_FILES": "1000000",
        "MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS": "300",
        "MOAT_OBSERVABILITY__LOG_LEVEL": "warning",
    }
    m = Moat(a.moat, a.tree, env)
    alt = Moat(a.moat_alt, a.tree, env) if a.moat_alt else None
    rg_version = subprocess.run([a.rg, "--version"], stdout=subprocess.PIPE,
                                text=True).stdout.splitlines()[0]
    print(f"tree      {a.tree}")
    print(f"ripgrep   {rg_version} ({a.rg})")
    print(f"moat      {a.moat} (mode {env['MOAT_SANDBOX__MODE']}), max_results {a.max_results}")
    if alt:
        print(f"moat-alt  {a.moat_alt} (same settings, timed interleaved)")
    print(f"reps      {a.reps} each, alternating rg -c, rg -n, moat; medians in ms, [q1, q3]")
    print(f"cpus      {os.cpu_count()}")
    print()

    # Parity check: the files each side walks (moat counts binary and
    # oversized files as skipped; `rg --files` lists them).
    files_argv = [x for x in rg_argv(a.rg, a.tree, "x", False, False, False)
                  if x not in ("--regexp", "x")]
    files_argv.insert(1, "--files")
    rg_files = subprocess.run(files_argv, stdout=subprocess.PIPE).stdout.count(b"\n")
    _, sc = m.call("search_code", {"pattern": "moat-bench-no-such-text-zq"})
    print(f"files     rg --files {rg_files}; moat scanned {sc['files_scanned']} "
          f"+ skipped {sc['files_skipped']} = {sc['files_scanned'] + sc['files_skipped']}")
    print()

    # Warm the page cache and the worker pool with every pattern once.
    for label, pattern, regex, cs in PATTERNS:
        args = {"pattern": pattern, "regex": regex, "case_sensitive": cs,
                "max_results": a.max_results}
        m.call("search_code", args)
        if alt:
            alt.call("search_code", args)
        run_rg(rg_argv(a.rg, a.tree, pattern, regex, cs, True))

    header = (f"{'pattern':<24} {'rg -c':>16} {'rg -n':>16} {'moat':>16} "
              f"{'moat/rg-c':>9} {'moat/rg-n':>9}  files  matching lines (rg)")
    print(header)
    print("-" * len(header))
    for label, pattern, regex, cs in PATTERNS:
        args = {"pattern": pattern, "regex": regex, "case_sensitive": cs,
                "max_results": a.max_results}
        t_rgc, t_rgn, t_moat, t_alt = [], [], [], []
        lines = files = 0
        for _ in range(a.reps):
            dt, _, out = run_rg(rg_argv(a.rg, a.tree, pattern, regex, cs, True))
            t_rgc.append(dt)
            lines = sum(int(l.rsplit(b":", 1)[1]) for l in out.splitlines() if l)
            dt, _, _ = run_rg(rg_argv(a.rg, a.tree, pattern, regex, cs, False))
            t_rgn.append(dt)
            dt, sc = m.call("search_code", args)
            t_moat.append(dt)
            files = sc["files_scanned"]
            if alt:
                dt, asc = alt.call("search_code", args)
                t_alt.append(dt)
                if asc["match_count"] != sc["match_count"]:
                    # Timed all the same, but said: the two answer differently
                    # (e.g. the walk rules changed between them).
                    print(f"  note: moat and moat-alt disagree on {pattern!r}: "
                          f"{sc['match_count']} vs {asc['match_count']} matches")
        med = {k: statistics.median(v) * 1000 for k, v in
               (("c", t_rgc), ("n", t_rgn), ("m", t_moat))}
        fmt = lambda xs: "{:6.1f} [{:.0f},{:.0f}]".format(
            statistics.median(xs) * 1000, *(x * 1000 for x in spread(xs)))
        print(f"{label:<24} {fmt(t_rgc):>16} {fmt(t_rgn):>16} {fmt(t_moat):>16} "
              f"{med['m'] / med['c']:>8.2f}x {med['m'] / med['n']:>8.2f}x  "
              f"{files}  {lines}")
        print(f"  pattern {pattern!r} regex={regex} case_sensitive={cs}; "
              f"moat matches {sc['match_count']} truncated={sc['truncated']} "
              f"skipped={sc['files_skipped']}")
        if alt:
            print(f"  moat-alt {fmt(t_alt)} ms; moat/alt "
                  f"{med['m'] / (statistics.median(t_alt) * 1000):.2f}x")
    m.close()
    if alt:
        alt.close()


if __name__ == "__main__":
    main()
