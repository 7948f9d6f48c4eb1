#!/usr/bin/env python3
"""git_log and git_diff through moat (stdio) next to the same git commands
run directly, over a generated repository of ~1,000 commits.

Standard library only. Called by bench/git.sh; see bench/README.md.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from search_driver import Moat, spread  # noqa: E402

FILES = 300
COMMITS = 1000


def make_repo(path, commits=COMMITS):
    """A repository of `commits` commits over FILES files (fast-import)."""
    os.makedirs(path, exist_ok=True)
    env = {"PATH": os.environ["PATH"], "HOME": path, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": "/dev/null"}
    subprocess.run(["git", "init", "--quiet", "--initial-branch=main", path], check=True, env=env)
    rnd = random.Random(7)
    contents = {f"src/mod{i // 30}/file{i}.py": [f"line {j} of file {i}" for j in range(60)]
                for i in range(FILES)}
    out = []
    for c in range(commits):
        changed = rnd.sample(sorted(contents), 4) if c else sorted(contents)
        out.append(f"commit refs/heads/main\nmark :{c + 1}\n"
                   f"author Bench <bench@example.invalid> {1700000000 + c * 60} +0000\n"
                   f"committer Bench <bench@example.invalid> {1700000000 + c * 60} +0000\n")
        msg = f"Change {c}: touch {len(changed)} files"
        out.append(f"data {len(msg.encode())}\n{msg}\n")
        if c:
            out.append(f"from :{c}\n")
        for f in changed:
            lines = contents[f]
            if c:
                k = rnd.randrange(len(lines))
                lines[k] = f"edited in commit {c}: {rnd.random():.6f}"
                if rnd.random() < 0.3:
                    lines.insert(k, f"inserted in commit {c}")
            data = ("\n".join(lines) + "\n").encode()
            out.append(f"M 100644 inline {f}\ndata {len(data)}\n")
            out.append(data.decode() + "\n")
    stream = "".join(out).encode()
    subprocess.run(["git", "fast-import", "--quiet"], input=stream, cwd=path, check=True, env=env)
    subprocess.run(["git", "checkout", "--quiet", "main"], cwd=path, check=True, env=env)
    subprocess.run(["git", "gc", "--quiet"], cwd=path, check=True, env=env)


# The argv moat's worker runs (worker/src/git.rs, tools/git_log.rs,
# tools/git_diff.rs), minus the sandbox, for the "direct" column.
FIXED = ["-c", "protocol.ext.allow=never", "-c", "protocol.allow=never", "-c", "core.pager=cat",
         "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
         "-c", "core.untrackedCache=false", "-c", "log.showSignature=false",
         "-c", "diff.external=", "-c", "color.ui=false", "--no-pager", "--no-optional-locks"]


def direct_env(repo):
    return {"PATH": os.path.dirname(GIT), "HOME": repo, "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_DIR": os.path.join(repo, ".git"),
            "GIT_WORK_TREE": repo, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C",
            "GIT_NO_LAZY_FETCH": "1", "GIT_LITERAL_PATHSPECS": "1"}


def run_direct(repo, argv):
    t = time.perf_counter()
    p = subprocess.run([GIT] + FIXED + argv, cwd=repo, env=direct_env(repo),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"git {argv} failed: {p.stderr.decode()}")
    return dt, len(p.stdout)


GIT = "git"


def main():
    global GIT
    ap = argparse.ArgumentParser()
    ap.add_argument("--moat", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--moat-alt", help="a second moat binary (e.g. the previous release), "
                    "measured in the same run: before/after")
    a = ap.parse_args()
    GIT = subprocess.run(["sh", "-c", "command -v git"], stdout=subprocess.PIPE,
                         text=True).stdout.strip()
    if not os.path.isdir(os.path.join(a.repo, ".git")):
        t = time.perf_counter()
        make_repo(a.repo)
        print(f"generated {a.repo} in {time.perf_counter() - t:.1f}s")
    count = subprocess.run([GIT, "rev-list", "--count", "HEAD"], cwd=a.repo,
                           stdout=subprocess.PIPE, text=True).stdout.strip()
    version = subprocess.run([GIT, "--version"], stdout=subprocess.PIPE, text=True).stdout.strip()
    mode = os.environ.get("MOAT_SANDBOX__MODE", "confined")
    print(f"repo      {a.repo}: {count} commits, {FILES} files")
    print(f"git       {version} ({GIT})")
    print(f"moat      {a.moat} (mode {mode})")
    print(f"reps      {a.reps} each, alternating; medians in ms, [q1, q3]")
    print()
    menv = {"MOAT_SANDBOX__MODE": mode, "MOAT_OBSERVABILITY__LOG_LEVEL": "warning"}
    m = Moat(a.moat, a.repo, menv)
    alt = Moat(a.moat_alt, a.repo, menv) if a.moat_alt else None
    if alt:
        print(f"moat-alt  {a.moat_alt}")
    rev = "HEAD~600..HEAD~500"
    cases = [
        ("git_log limit 20", "git_log", {"limit": 20},
         ["log", "--max-count=20", "--format=%H%x1f%h%x1f%an%x1f%aI%x1f%s%x1e", "--no-color",
          "--no-decorate", "--no-mailmap", "--end-of-options", "--"]),
        ("git_log limit 200", "git_log", {"limit": 200},
         ["log", "--max-count=200", "--format=%H%x1f%h%x1f%an%x1f%aI%x1f%s%x1e", "--no-color",
          "--no-decorate", "--no-mailmap", "--end-of-options", "--"]),
        (f"git_diff {rev}", "git_diff", {"revision": rev},
         ["diff", "--ignore-submodules=dirty", "--submodule=short", "--no-color", "--no-ext-diff",
          "--no-textconv", "--find-renames", "--end-of-options", rev, "--"]),
        (f"git_diff {rev} stat", "git_diff", {"revision": rev, "stat_only": True},
         ["diff", "--ignore-submodules=dirty", "--submodule=short", "--no-color", "--no-ext-diff",
          "--no-textconv", "--find-renames", "--stat=200", "--end-of-options", rev, "--"]),
        ("git_diff work tree", "git_diff", {},
         ["diff", "--ignore-submodules=dirty", "--submodule=short", "--no-color", "--no-ext-diff",
          "--no-textconv", "--find-renames", "--end-of-options", "--"]),
    ]
    for _, tool, args, argv in cases:  # warm
        m.call(tool, args)
        if alt:
            alt.call(tool, args)
        run_direct(a.repo, argv)
    header = f"{'call':<34} {'git direct':>16} {'moat':>16} {'moat-git':>9} {'moat/git':>8}  out bytes"
    if alt:
        header += f"  {'moat-alt':>16} {'moat/alt':>8}"
    print(header)
    print("-" * len(header))
    for label, tool, args, argv in cases:
        td, tm, ta = [], [], []
        size = 0
        for _ in range(a.reps):
            dt, size = run_direct(a.repo, argv)
            td.append(dt)
            dt, _ = m.call(tool, args)
            tm.append(dt)
            if alt:
                dt, _ = alt.call(tool, args)
                ta.append(dt)
        fmt = lambda xs: "{:6.2f} [{:.1f},{:.1f}]".format(
            statistics.median(xs) * 1000, *(x * 1000 for x in spread(xs)))
        md, mm = statistics.median(td) * 1000, statistics.median(tm) * 1000
        line = f"{label:<34} {fmt(td):>16} {fmt(tm):>16} {mm - md:>7.2f}ms {mm / md:>7.2f}x  {size:>9}"
        if alt:
            ma = statistics.median(ta) * 1000
            line += f"  {fmt(ta):>16} {mm / ma:>7.2f}x"
        print(line)
    m.close()
    if alt:
        alt.close()


if __name__ == "__main__":
    main()
