#!/usr/bin/env python3
"""moat's navigation tools against their peers, and how moat's cost grows.

A. On the Linux tree, interleaved reps, each call timed from writing the
   request line to reading the whole answer line (an editor's view):
   * find_files against server-filesystem's search_files (Node, MCP over
     stdio) and `rg --files` run as a process, for a few queries, and a whole
     listing paged through with the cursor against one rg run;
   * directory_tree against server-filesystem's directory_tree on
     subdirectories of different sizes (answer bytes too).
B. Growth, each point a median of reps: search_code and find_files against
   tree size (copies of the first N files of the tree in sorted path order),
   list_directory against entries in one directory, read_file against file
   size, and the RSS of moat's whole process tree sampled after every point.

Standard library only; matplotlib is imported for the figure alone
(`--no-plot` needs nothing else). Called by bench/growth.sh, which installs
the peer and matplotlib; see bench/README.md.
"""

import argparse
import datetime
import json
import os
import select
import shutil
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from search_driver import MODERN_META, rg_argv, walk_globs  # noqa: E402

# Limits raised so that one answer can hold what the schema allows (1,000
# paths, 20,000 tree entries, a 1 MiB file whole) and a walk covers the whole
# tree: the growth curves then measure the work, not the default budgets. The
# defaults are measured too, by a second moat ("moat (defaults)").
RAISED = {
    "MOAT_SANDBOX__MAX_SEARCH_FILES": "1000000",
    "MOAT_SANDBOX__MAX_SEARCH_RESULTS": "1000",
    "MOAT_SANDBOX__MAX_RESULT_BYTES": "8388608",
    "MOAT_SANDBOX__MAX_ANSWER_CHARS": "4000000",
    "MOAT_SANDBOX__MAX_DIRECTORY_ENTRIES": "20000",
    "MOAT_SANDBOX__MAX_READ_LINES": "100000",
}

# Bytes of one answer line a client accepts; a longer one counts as "answer
# too big" and the server is restarted (the reader must stay bounded).
MAX_ANSWER_BYTES = 256 * 1024 * 1024
NL = b"\n"

SUBSET_SIZES = [1000, 10000]          # and the whole tree
DIR_SIZES = [10, 100, 1000, 10000]
READ_SIZES = [1024, 10 * 1024, 100 * 1024, 1024 * 1024, 4 * 1024 * 1024]
TREE_DIRS = ["drivers/net/ethernet/intel", "kernel", "fs", "drivers/net", "drivers"]
SEARCHES = [("literal", "mutex_lock", False),
            ("regex", r"spin_(un)?lock_irq(save|restore)?", True)]


class Failed(Exception):
    """A call that did not give an answer: timeout, error, too big, exit."""


class Server:
    """An MCP server over stdio, every call bounded by a timeout. A server
    that timed out or sent too much is killed (its whole process group) and
    started again before the next call."""

    def __init__(self, label, argv, env, legacy_init):
        self.label, self.argv, self.env, self.legacy = label, argv, env, legacy_init
        self.proc = None
        self.next_id = 1
        self.buf = bytearray()

    def start(self, timeout=30):
        self.proc = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=self.env, bufsize=0, start_new_session=True)
        self.buf = bytearray()
        if self.legacy:
            self.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "moat-bench", "version": "0"}},
                     timeout)
            self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def kill(self):
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.proc = None

    def close(self):
        if self.proc is None:
            return
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
        self.proc = None

    def _write(self, msg):
        data = msg if isinstance(msg, bytes) else (json.dumps(msg) + "\n").encode()
        fd = self.proc.stdin.fileno()
        while data:
            data = data[os.write(fd, data):]

    def _read_answer(self, want_id, deadline):
        """Lines until the answer to `want_id` (requests and notifications
        from the server are skipped); (the time its last byte was read, raw
        line, parsed). The time is taken before the line is parsed: the
        client's JSON decoding is not the server's cost."""
        fd = self.proc.stdout.fileno()
        scan = 0
        while True:
            nl = self.buf.find(b"\n", scan)
            if nl >= 0:
                done = time.perf_counter()
                line = bytes(self.buf[:nl + 1])
                del self.buf[:nl + 1]
                scan = 0
                msg = json.loads(line)
                if msg.get("id") == want_id and "method" not in msg:
                    return done, line, msg
                continue
            scan = len(self.buf)
            left = deadline - time.perf_counter()
            if left <= 0:
                raise Failed("timeout")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                raise Failed("timeout")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise Failed("server exited")
            self.buf += chunk
            if len(self.buf) > MAX_ANSWER_BYTES:
                raise Failed(f"answer too big (> {MAX_ANSWER_BYTES >> 20} MiB)")

    def rpc(self, method, params, timeout):
        """(seconds, raw answer line, parsed answer)."""
        if self.proc is None:
            self.start()
        rid = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        data = (json.dumps(msg) + "\n").encode()
        try:
            t = time.perf_counter()
            self._write(data)
            done, line, r = self._read_answer(rid, t + timeout)
            dt = done - t
        except (Failed, OSError, ValueError) as e:
            self.kill()
            raise Failed(f"{e} after {timeout:g} s" if str(e) == "timeout" else str(e))
        return dt, line, r

    def call(self, tool, args, timeout):
        """One tools/call: (seconds, answer bytes, result). Errors raise."""
        params = {"name": tool, "arguments": args}
        if not self.legacy:
            params["_meta"] = MODERN_META
        dt, line, r = self.rpc("tools/call", params, timeout)
        if "error" in r:
            raise Failed(f"error {r['error'].get('code')}: {r['error'].get('message', '')[:120]}")
        res = r["result"]
        if res.get("isError"):
            text = " ".join(c.get("text", "") for c in res.get("content", []))
            raise Failed(f"tool error: {text[:160]}")
        return dt, len(line), res

    def rss(self):
        """(processes, Σ VmRSS MiB, Σ VmHWM MiB) of the server and every
        descendant (for moat: the broker and its workers)."""
        if self.proc is None:
            return 0, 0.0, 0.0
        pids, todo = [], [self.proc.pid]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            try:
                for tid in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{tid}/children") as f:
                        todo += [int(c) for c in f.read().split()]
            except OSError:
                pass
        rss = hwm = 0
        for pid in pids:
            try:
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            rss += int(line.split()[1])
                        elif line.startswith("VmHWM:"):
                            hwm += int(line.split()[1])
            except OSError:
                pass
        return len(pids), rss / 1024, hwm / 1024


def moat_server(label, binary, workspace, env):
    full = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent"}
    full.update(env)
    return Server(label, [binary, "serve", "--workspace", workspace], full, legacy_init=False)


def fs_server(node, fs_js, root):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")}
    return Server("server-filesystem", [node, fs_js, root], env, legacy_init=True)


def run_proc(argv, cwd, timeout):
    """A peer run as a process, its output read whole from a pipe:
    (seconds, stdout)."""
    t = time.perf_counter()
    try:
        p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failed(f"timeout after {timeout:g} s")
    dt = time.perf_counter() - t
    if p.returncode not in (0, 1):
        raise Failed(f"exit {p.returncode}")
    return dt, p.stdout


def rg_files_argv(rg, path, glob=None, iglob=None):
    """`rg --files` with moat's walk: .gitignore honoured inside the tree
    only, dot files listed, the skip list and the denylist pruned. No size
    limit: find_files lists files of any size."""
    argv = [rg, "--no-config", "--files", "--hidden", "--no-require-git",
            "--no-ignore-parent", "--no-ignore-global", "--no-messages"]
    if glob:
        argv += ["--glob", glob]
    if iglob:
        argv += ["--iglob", iglob]
    return argv + walk_globs() + [path]


def quart(xs):
    if len(xs) >= 4:
        q = statistics.quantiles(xs, n=4)
        return q[0], q[2]
    return min(xs), max(xs)


def ms(x):
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


class Cell:
    """One contender's figures for one case."""

    def __init__(self):
        self.times, self.failure, self.facts = [], None, ""

    def ok(self):
        return self.failure is None and self.times

    def median(self):
        return statistics.median(self.times) * 1000 if self.times else None

    def show(self):
        if self.failure:
            return f"FAILED: {self.failure}"
        q1, q3 = quart(self.times)
        return f"{ms(self.median())} [{ms(q1 * 1000)}, {ms(q3 * 1000)}]"

    def as_dict(self):
        return {"ms": [t * 1000 for t in self.times], "median_ms": self.median(),
                "failure": self.failure, "facts": self.facts}


def measure(contenders, reps, warm=True):
    """contenders: [(name, fn)], fn() -> (seconds, facts). Warm each once,
    then `reps` rounds, each timing every contender once in turn. A
    contender that fails is not called again in this case."""
    cells = {name: Cell() for name, _ in contenders}
    rounds = ([None] if warm else []) + list(range(reps))
    for r in rounds:
        for name, fn in contenders:
            c = cells[name]
            if c.failure:
                continue
            try:
                dt, facts = fn()
            except Failed as e:
                c.failure = str(e)
                continue
            if r is not None:
                c.times.append(dt)
                c.facts = facts
    return cells


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def print_table(title, rows, names, base):
    """rows: [(case, {name: Cell})]; a ratio column against `base`."""
    print(f"\n{title}\n")
    w = max(len(n) for n in names)
    head = f"{'case':<34} {'contender':<{w}} {'median ms [q1, q3]':>30} {'÷ ' + base:>10}  answer"
    print(head)
    print("-" * len(head))
    for case, cells in rows:
        b = cells.get(base)
        for i, n in enumerate(names):
            if n not in cells:
                continue
            c = cells[n]
            ratio = ""
            if c.ok() and b is not None and b.ok():
                ratio = f"{c.median() / b.median():.2f}x"
            print(f"{case if i == 0 else '':<34} {n:<{w}} {c.show():>30} {ratio:>10}  {c.facts}")


# --------------------------------------------------------------- preparation

def sorted_files(tree):
    """Every regular file under `tree` (no link followed), relative, in byte
    order of the path."""
    out = []
    for dirpath, dirnames, filenames in os.walk(tree):
        rel = os.path.relpath(dirpath, tree)
        for n in filenames:
            p = os.path.join(dirpath, n)
            if os.path.isfile(p) and not os.path.islink(p):
                out.append(n if rel == "." else os.path.join(rel, n))
    out.sort(key=os.fsencode)
    return out


def build_once(final, fill):
    """Build `final` in a temporary directory beside it and rename it into
    place: a directory that exists is complete."""
    if os.path.isdir(final):
        return
    tmp = final + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    fill(tmp)
    os.rename(tmp, final)


def prepare(tree, cache):
    """The growth workspace under `cache`: copies of the first N files of the
    tree (copies, not hard links: moat does not list or read a file with a
    second link), directories of small files, and files of source text cut
    to a size. Built once; later runs reuse it."""
    ws = os.path.join(cache, "ws")
    os.makedirs(ws, exist_ok=True)
    files = None
    subsets = []
    for n in SUBSET_SIZES + [None]:
        if files is None:
            files = sorted_files(tree)
        count = len(files) if n is None else min(n, len(files))
        name = f"tree-{count}"
        subsets.append(name)

        def fill(tmp, chosen=files[:count]):
            print(f"[growth] copying {len(chosen)} files into {name}", file=sys.stderr)
            made = set()
            for rel in chosen:
                d = os.path.dirname(rel)
                if d not in made:
                    os.makedirs(os.path.join(tmp, d), exist_ok=True)
                    made.add(d)
                shutil.copyfile(os.path.join(tree, rel), os.path.join(tmp, rel))
        build_once(os.path.join(ws, name), fill)

    for n in DIR_SIZES:
        def fill(tmp, n=n):
            for i in range(n):
                with open(os.path.join(tmp, f"f{i:05d}.txt"), "w") as f:
                    f.write(f"small file {i} of {n}\n" * 3)
        build_once(os.path.join(ws, f"dir-{n}"), fill)

    def fill_read(tmp):
        # Real source text: the .c files of kernel/ concatenated in path
        # order (UTF-8 only), each size cut at the last line end within it.
        text = bytearray()
        for rel in files or sorted_files(tree):
            if rel.startswith("kernel/") and rel.endswith(".c"):
                with open(os.path.join(tree, rel), "rb") as f:
                    data = f.read()
                try:
                    data.decode("utf-8")
                except UnicodeDecodeError:
                    continue
                text += data
                if len(text) > max(READ_SIZES):
                    break
        for size in READ_SIZES:
            cut = bytes(text[:size])
            cut = cut[:cut.rfind(b"\n") + 1]
            with open(os.path.join(tmp, f"read-{size}.c"), "wb") as f:
                f.write(cut)
    build_once(os.path.join(ws, "read"), fill_read)
    return ws, subsets


def size_name(n):
    if n >= 1 << 20:
        return f"{n / (1 << 20):.0f} MiB" if n % (1 << 20) == 0 else f"{n / (1 << 20):.2f} MiB"
    return f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} B"


# ------------------------------------------------------------------- part A

def part_a(a, moats, fs, rss_log, out):
    tree = a.tree
    T = a.timeout
    names = [m.label for m in moats] + ["server-filesystem", "rg --files"]

    def moat_find(m, args):
        def fn():
            dt, nbytes, r = m.call("find_files", args, T)
            s = r["structuredContent"]
            return dt, (f"{s['file_count']} of {s['total_matches']} files, "
                        f"{nbytes:,} B, stopped_by {s['stopped_by'] or '-'}")
        return fn

    def fs_search(path, pattern):
        def fn():
            dt, nbytes, r = fs.call("search_files", {"path": path, "pattern": pattern}, T)
            text = r["content"][0]["text"]
            n = 0 if text == "No matches found" else text.count("\n") + 1
            return dt, f"{n} paths (files and directories), {nbytes:,} B"
        return fn

    def rg_files(argv):
        def fn():
            dt, outp = run_proc(argv, tree, T)
            return dt, f"{outp.count(NL)} files, unsorted, {len(outp):,} B"
        return fn

    cases = [
        ("*.c under drivers/",
         {"glob": "*.c", "path": "drivers", "max_results": 1000},
         (os.path.join(tree, "drivers"), "**/*.c"),
         rg_files_argv(a.rg, "drivers", glob="*.c")),
        ("name contains 'mutex'",
         {"name": "mutex", "max_results": 1000},
         (tree, "**/*mutex*"),
         rg_files_argv(a.rg, ".", iglob="*mutex*")),
        ("first page, whole tree",
         {"max_results": 1000},
         (tree, "**"),
         rg_files_argv(a.rg, ".")),
    ]
    rows = []
    for label, margs, (fpath, fpat), argv in cases:
        contenders = [(m.label, moat_find(m, margs)) for m in moats]
        contenders += [("server-filesystem", fs_search(fpath, fpat)),
                       ("rg --files", rg_files(argv))]
        cells = measure(contenders, a.reps)
        rows.append((label, cells))
        rss_log.append(("A find_files " + label, [m.rss() for m in moats], fs.rss()))
    print_table("A1. find_files against server-filesystem search_files and rg --files "
                "(Linux tree)", rows, names, "moat")
    print("  moat: find_files with the arguments below, max_results 1000 (the schema "
          "maximum), sorted by path, one page;\n"
          "  server-filesystem: search_files {path, pattern} (minimatch on the path "
          "below `path`, case-sensitive, no .gitignore, directories too, no paging: all "
          "matches in one answer);\n"
          "  rg --files: moat's walk filters (.gitignore inside the tree, --hidden, skip "
          "list, denylist), the whole list, unsorted (parallel walk).")
    for label, margs, (fpath, fpat), argv in cases:
        rg_filter = " ".join(argv[8:10]) if argv[8] in ("--glob", "--iglob") and \
            not argv[9].startswith("!") else "(no filter)"
        print(f"  {label}: moat {json.dumps(margs)}; server-filesystem pattern {fpat!r} "
              f"under {os.path.relpath(fpath, tree)}; rg --files {rg_filter} {argv[-1]}")
    out["find_files"] = [{"case": c, **{n: v.as_dict() for n, v in cells.items()}}
                         for c, cells in rows]

    # A2. A whole listing paged through with the cursor.
    def moat_pages(m, args):
        def fn():
            total, pages, seen, nbytes, cursor = 0.0, 0, 0, 0, None
            while True:
                call = dict(args, cursor=cursor) if cursor else args
                dt, nb, r = m.call("find_files", call, T)
                s = r["structuredContent"]
                total += dt
                pages += 1
                seen += s["file_count"]
                nbytes += nb
                cursor = s.get("next_cursor")
                if not cursor:
                    break
                if pages > 1000:
                    raise Failed("more than 1000 pages")
            last = f", last page stopped_by {s['stopped_by']}" if s["stopped_by"] else ""
            return total, (f"{pages} pages, {seen} of {s['total_matches']} files, "
                           f"{nbytes:,} B in all{last}")
        return fn

    pargs = {"glob": "**/*.h", "max_results": 1000}
    contenders = [(m.label, moat_pages(m, pargs)) for m in moats]
    contenders += [("server-filesystem", fs_search(tree, "**/*.h")),
                   ("rg --files", rg_files(rg_files_argv(a.rg, ".", glob="*.h")))]
    cells = measure(contenders, a.page_reps)
    rss_log.append(("A find_files paged **/*.h", [m.rss() for m in moats], fs.rss()))
    rows = [("all of **/*.h, paged", cells)]
    if a.defaults is not None:
        d = measure([(a.defaults.label, moat_pages(a.defaults, {"glob": "**/*.h"}))], 1,
                    warm=False)
        rows.append(("  the same at default limits", d))
    print_table("A2. A whole listing: find_files {glob: \"**/*.h\", max_results: 1000} "
                "following next_cursor, against one call / one run", rows,
                names + ([a.defaults.label] if a.defaults else []), "moat")
    print("  Every page is a new walk of the whole tree (the page is cut from the sorted "
          "list of all matches). server-filesystem: one search_files answer holding every "
          "match; rg: one run. The default-limits row is one run without max_results: "
          "there a page is at most 200 paths (max_search_results) and 40,000 characters "
          "(max_answer_chars), and a walk stops after 20,000 files (max_search_files), "
          "after which no cursor is offered.")
    out["paging"] = [{"case": c, **{n: v.as_dict() for n, v in cells.items()}}
                     for c, cells in rows]

    # A3. directory_tree.
    def moat_tree(m, path):
        def fn():
            total, pages, entries, nbytes, cursor, stops = 0.0, 0, 0, 0, None, set()
            args = {"path": path, "depth": 10, "max_entries": 20000}
            while True:
                call = dict(args, cursor=cursor) if cursor else args
                dt, nb, r = m.call("directory_tree", call, T)
                s = r["structuredContent"]
                total += dt
                pages += 1
                entries += s["entry_count"]
                nbytes += nb
                stops.update(s["stopped_by"])
                cursor = s.get("next_cursor")
                if not cursor or pages > 100:
                    break
            # A tree still cut at the end had no cursor to go on with.
            left = ", cut at max_entries with no cursor" if s["truncated"] else ""
            stops.discard("entries")
            return total, (f"{entries} entries in {pages} page{'s' if pages > 1 else ''}, "
                           f"{nbytes:,} B{left}" +
                           (f", also cut by {sorted(stops)}" if stops else ""))
        return fn

    def fs_tree(path):
        def fn():
            dt, nbytes, r = fs.call("directory_tree", {"path": os.path.join(tree, path)}, T)
            nodes = json.loads(r["content"][0]["text"])
            count, deepest, todo = 0, 0, [(n, 1) for n in nodes]
            while todo:
                n, d = todo.pop()
                count += 1
                deepest = max(deepest, d)
                todo += [(c, d + 1) for c in n.get("children", [])]
            return dt, f"{count} entries, {deepest} levels, {nbytes:,} B"
        return fn

    rows = []
    for path in TREE_DIRS:
        contenders = [(m.label, moat_tree(m, path)) for m in moats]
        contenders.append(("server-filesystem", fs_tree(path)))
        rows.append((path, measure(contenders, a.reps)))
        rss_log.append(("A directory_tree " + path, [m.rss() for m in moats], fs.rss()))
    print_table("A3. directory_tree against server-filesystem directory_tree (Linux tree)",
                rows, names[:-1], "moat")
    print("  moat: {path, depth: 10 (the schema maximum), max_entries: 20000 (the "
          "maximum)}, following next_cursor when cut by entries; an indented text tree "
          "(files with sizes) plus structured entries; dot files left out (the default).\n"
          "  server-filesystem: {path}: the whole subtree, unlimited depth, as "
          "pretty-printed JSON (names and types), sent twice (text and "
          "structuredContent).")
    out["directory_tree"] = [{"case": c, **{n: v.as_dict() for n, v in cells.items()}}
                             for c, cells in rows]


# ------------------------------------------------------------------- part B

def part_b(a, gmoats, gdefaults, gfs, ws, subsets, rss_log, out):
    T = a.timeout
    mnames = [m.label for m in gmoats]
    series = out.setdefault("growth", {})

    def point(key, x, cells):
        series.setdefault(key, []).append(
            {"x": x, **{n: c.as_dict() for n, c in cells.items()}})

    def sample(label):
        rss_log.append(("B " + label, [m.rss() for m in gmoats],
                        gdefaults.rss() if gdefaults else None))

    # B1. search_code and find_files against tree size.
    print(f"\nB1. search_code and find_files against tree size (copies of the first N "
          f"files of the tree in path order; reps {a.reps_b})\n")
    sizes = []
    for name in subsets:
        root = os.path.join(ws, name)
        nfiles = nbytes = nc = 0
        for dirpath, _, filenames in os.walk(root):
            for f in filenames:
                nfiles += 1
                nbytes += os.path.getsize(os.path.join(dirpath, f))
                nc += f.endswith(".c")
        sizes.append((name, nfiles, nbytes, nc))
        print(f"  {name}: {nfiles} files, {nbytes / 1e6:.1f} MB, {nc} .c files")
    cols = []
    for label, pattern, regex in SEARCHES:
        cols.append((f"search_code {label}", label, pattern, regex))
    cols.append(("find_files first page", None, None, None))
    head = f"{'files':>7} {'MB':>7}  {'series':<22} " + " ".join(
        f"{n:>26}" for n in mnames + ["rg (reference)"]) + "  answer (moat)"
    print()
    print(head)
    print("-" * len(head))
    for name, nfiles, nbytes, _ in sizes:
        root = os.path.join(ws, name)
        for key, label, pattern, regex in cols:
            if label is None:
                args = {"path": name, "max_results": 1000}

                def mfn(m, args=args):
                    def fn():
                        dt, nb, r = m.call("find_files", args, T)
                        s = r["structuredContent"]
                        return dt, (f"{s['file_count']} of {s['total_matches']} of "
                                    f"{s['files_scanned']} walked, {nb:,} B")
                    return fn
                argv = rg_files_argv(a.rg, ".")
            else:
                args = {"pattern": pattern, "regex": regex, "case_sensitive": True,
                        "max_results": 500, "path": name}

                def mfn(m, args=args):
                    def fn():
                        dt, nb, r = m.call("search_code", args, T)
                        s = r["structuredContent"]
                        return dt, (f"{s['match_count']} matches shown, {s['files_scanned']} "
                                    f"files scanned, {nb:,} B")
                    return fn
                argv = rg_argv(a.rg, ".", pattern, regex, True, True)

            def rfn(argv=argv, root=root):
                def fn():
                    dt, o = run_proc(argv, root, T)
                    return dt, f"{o.count(NL)} lines"
                return fn
            contenders = [(m.label, mfn(m)) for m in gmoats] + [("rg", rfn())]
            cells = measure(contenders, a.reps_b)
            point(key, nfiles, cells)
            sample(f"{key}, {nfiles} files")
            print(f"{nfiles:>7} {nbytes / 1e6:>7.1f}  {key:<22} " + " ".join(
                f"{cells[n].show():>26}" for n in mnames + ["rg"]) +
                f"  {cells['moat'].facts}")
    print("  search_code: {pattern, regex, case_sensitive: true, max_results: 500, path}; "
          "find_files: {path, max_results: 1000}, the first page of every file (the whole "
          "subtree is walked and sorted for it).\n"
          "  rg: `rg -c` with moat's search semantics (as bench/search.sh) for search_code, "
          "`rg --files` with moat's walk (the whole list, unsorted) for find_files.")

    def against_peer(series, x, width, moat_fn, peer_fn, name):
        """One point of a growth series against server-filesystem: every
        moat (and the one at default limits) and the peer, measured side by
        side, noted for the figure and printed as a row."""
        contenders = [(m.label, moat_fn(m)) for m in gmoats]
        if gdefaults:
            contenders.append((gdefaults.label, moat_fn(gdefaults)))
        contenders.append(("server-filesystem", peer_fn))
        cells = measure(contenders, a.reps_b)
        point(series, x, cells)
        sample(name)
        print(f"{x:>{width}} " + " ".join(f"{cells[c].show():>24}" for c in mnames + extra) +
              f"  {cells['moat'].facts}" +
              (f" | {cells[gdefaults.label].facts}" if gdefaults else ""))

    # B2. list_directory against entries.
    print(f"\nB2. list_directory against entries in one directory (small files; reps "
          f"{a.reps_b})\n")
    extra = ([gdefaults.label] if gdefaults else []) + ["server-filesystem"]
    head = f"{'entries':>8} " + " ".join(f"{n:>24}" for n in mnames + extra) + \
        "  answer (moat | defaults)"
    print(head)
    print("-" * len(head))
    for n in DIR_SIZES:
        path = f"dir-{n}"

        def lfn(m):
            def fn():
                dt, nb, r = m.call("list_directory", {"path": path}, T)
                s = r["structuredContent"]
                return dt, (f"{len(s['entries'])} of {s['files'] + s['directories']} "
                            f"entries, {nb:,} B" + (" (cut)" if s["truncated"] else ""))
            return fn

        def pfn():
            dt, nb, r = gfs.call("list_directory", {"path": os.path.join(ws, path)}, T)
            return dt, f"{r['content'][0]['text'].count(chr(10)) + 1} lines, {nb:,} B"
        against_peer("list_directory", n, 8, lfn, pfn, f"list_directory {n}")
    print("  server-filesystem: its list_directory (names and types, `[FILE] name` lines); "
          "moat also reports each file's size, so it stats every entry.")

    # B3. read_file against file size.
    print(f"\nB3. read_file against file size (kernel/*.c text; reps {a.reps_b})\n")
    head = f"{'bytes':>10} " + " ".join(f"{n:>24}" for n in mnames + extra) + \
        "  answer (moat | defaults)"
    print(head)
    print("-" * len(head))
    for size in READ_SIZES:
        rel = f"read/read-{size}.c"
        real = os.path.getsize(os.path.join(ws, rel))

        def rfn(m):
            def fn():
                dt, nb, r = m.call("read_file", {"path": rel}, T)
                s = r["structuredContent"]
                cut = f", cut by {s['stopped_by']}" if s["truncated"] else ""
                return dt, (f"lines {s['start_line']}-{s['end_line']} of {s['total_lines']}, "
                            f"{nb:,} B{cut}")
            return fn

        def pfn():
            dt, nb, r = gfs.call("read_text_file", {"path": os.path.join(ws, rel)}, T)
            return dt, f"{nb:,} B"
        against_peer("read_file", real, 10, rfn, pfn, f"read_file {size_name(size)}")
    print("  server-filesystem: read_text_file, the whole file (its text twice: content "
          "and structuredContent).")

    # B5. The largest calls again: RSS that keeps rising from round to round
    # would be a leak; RSS that stays where the largest answer left it is
    # memory kept for reuse.
    whole = subsets[-1]
    big = [("search_code", {"pattern": SEARCHES[0][1], "case_sensitive": True,
                            "max_results": 500, "path": whole}),
           ("find_files", {"path": whole, "max_results": 1000}),
           ("list_directory", {"path": f"dir-{DIR_SIZES[-1]}"}),
           ("read_file", {"path": f"read/read-{READ_SIZES[-2]}.c"}),
           ("read_file", {"path": f"read/read-{READ_SIZES[-1]}.c"})]
    for k in range(a.repeat_rounds):
        for m in gmoats:
            for tool, args in big:
                try:
                    m.call(tool, args, T)
                except Failed as e:
                    print(f"  repeat: {m.label} {tool} failed: {e}")
        sample(f"repeat {k + 1}: the five largest calls again")
    print(f"\nB5. The five largest calls of B (whole-tree search_code and find_files, "
          f"list_directory of {DIR_SIZES[-1]:,}, read_file of {size_name(READ_SIZES[-2])} and "
          f"{size_name(READ_SIZES[-1])}) repeated {a.repeat_rounds} times; RSS after each "
          f"round in B4 (\"repeat\" rows).")


def print_rss(rss_log, labels, second):
    print("\nB4. Memory: RSS of moat's process tree (broker + workers) after each point, MiB\n")
    head = f"{'after':<46} " + " ".join(f"{n:>18}" for n in labels) + f" {second:>18}"
    print(head)
    print("-" * len(head))
    for label, ms_, other in rss_log:
        cells = [f"{r:.1f} ({p} proc)" for p, r, _ in ms_]
        o = f"{other[1]:.1f} ({other[0]} proc)" if other else "-"
        print(f"{label:<46} " + " ".join(f"{c:>18}" for c in cells) + f" {o:>18}")


def plot(path, out, rss_log, labels, meta):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    g = out.get("growth", {})
    fig, axes = plt.subplots(2, 3, figsize=(16, 9.5))
    fig.suptitle(meta, fontsize=9)
    styles = {"moat": dict(color="C0", marker="o"),
              "moat-alt": dict(color="C1", marker="s"),
              "moat (defaults)": dict(color="C0", marker="x", linestyle="--"),
              "server-filesystem": dict(color="C2", marker="^"),
              "rg": dict(color="0.4", marker=".", linestyle=":")}

    def style(name):
        return styles.get(name, dict(marker="d"))

    def draw(ax, key, title, xlabel, names=None, prefix=""):
        pts = g.get(key, [])
        if not pts:
            ax.set_visible(False)
            return
        names = names or [k for k in pts[0] if k != "x"]
        for n in names:
            xs = [p["x"] for p in pts if p.get(n) and p[n]["median_ms"] is not None]
            ys = [p[n]["median_ms"] for p in pts if p.get(n) and p[n]["median_ms"] is not None]
            if xs:
                ax.plot(xs, ys, label=prefix + n, **style(n))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("ms per call (median)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)

    ax = axes[0][0]
    for i, (label, _, _) in enumerate(SEARCHES):
        key = f"search_code {label}"
        for n in [k for k in (g.get(key) or [{}])[0] if k != "x"]:
            pts = g[key]
            st = dict(style(n))
            st["marker"] = "o^"[i]
            ax.plot([p["x"] for p in pts if p[n]["median_ms"]],
                    [p[n]["median_ms"] for p in pts if p[n]["median_ms"]],
                    label=f"{n}: {label}", **st)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title("search_code vs tree size (rg: rg -c)", fontsize=10)
    ax.set_xlabel("files in the tree")
    ax.set_ylabel("ms per call (median)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    draw(axes[0][1], "find_files first page", "find_files (first 1,000 paths) vs tree size "
         "(rg: rg --files)", "files in the tree")
    draw(axes[0][2], "list_directory", "list_directory vs entries", "entries in the directory")
    draw(axes[1][0], "read_file", "read_file vs file size (the 4 MiB file is over "
         "max_file_bytes: one window of it)", "file bytes")

    ax = axes[1][1]
    for n in ["moat", "moat-alt", "server-filesystem"]:
        xs, ys = [], []
        for row in out.get("directory_tree", []):
            c = row.get(n)
            if c and c["median_ms"] is not None:
                facts = c["facts"]
                try:
                    xs.append(int(facts.split()[0]))
                except (ValueError, IndexError):
                    continue
                ys.append(c["median_ms"])
        if xs:
            ax.plot(xs, ys, label=n, **style(n))
    if not out.get("directory_tree"):
        ax.set_visible(False)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title("directory_tree vs entries returned (Linux subtrees)", fontsize=10)
    ax.set_xlabel("entries in the subtree")
    ax.set_ylabel("ms per call (median, moat: all pages)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)

    ax = axes[1][2]
    xs = list(range(len(rss_log)))
    first_b = next((x for x, e in zip(xs, rss_log) if e[0].startswith("B")), len(xs))
    for i, n in enumerate(labels):
        st = {k: v for k, v in style(n).items() if k != "marker"}
        for lo, hi, where in ((0, first_b, "A: Linux tree"), (first_b, len(xs), "B: growth ws")):
            if hi > lo:
                ax.step(xs[lo:hi], [e[1][i][1] for e in rss_log[lo:hi]], where="mid",
                        label=f"{n}, {where}", **st)
    for lo, hi, name, color in ((0, first_b, "server-filesystem", "C2"),
                                (first_b, len(xs), "moat (defaults)", "C4")):
        pts = [(x, e[2][1]) for x, e in zip(xs[lo:hi], rss_log[lo:hi]) if e[2]]
        if pts:
            ax.step([p[0] for p in pts], [p[1] for p in pts], where="mid", label=name,
                    color=color, alpha=0.7)
    if 0 < first_b < len(xs):
        ax.axvline(first_b - 0.5, color="0.5", linewidth=0.8)
    ax.set_ylim(bottom=0)
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.set_title("RSS after each point (Σ VmRSS of the process tree)", fontsize=10)
    ax.set_xlabel("point, in run order (A cases | B points, then the repeats)")
    ax.set_ylabel("MiB")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)

    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=110)
    print(f"\nfigure: {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--moat", required=True)
    ap.add_argument("--moat-alt", help="a second moat binary measured in the same run")
    ap.add_argument("--tree", required=True, help="the Linux tree")
    ap.add_argument("--cache", required=True, help="where the growth workspace is built")
    ap.add_argument("--rg", required=True)
    ap.add_argument("--node", default=shutil.which("node") or "node")
    ap.add_argument("--fs-server", required=True, help="server-filesystem's dist/index.js")
    ap.add_argument("--reps", type=int, default=5, help="reps per case in part A")
    ap.add_argument("--page-reps", type=int, default=3, help="reps of the paged listing")
    ap.add_argument("--reps-b", type=int, default=5, help="reps per point in part B")
    ap.add_argument("--repeat-rounds", type=int, default=5,
                    help="rounds of B's largest calls after the series (RSS after each)")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per call")
    ap.add_argument("--only", choices=["a", "b"], help="one part only")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--plot", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   "growth.png"))
    ap.add_argument("--json", help="write every figure to this file")
    a = ap.parse_args()

    mode = os.environ.get("MOAT_SANDBOX__MODE", "confined")
    # The tool timeout sits above the client's, so a slow call is seen as
    # the client's timeout, not as a partial answer cut by moat's clock.
    base = {"MOAT_SANDBOX__MODE": mode, "MOAT_OBSERVABILITY__LOG_LEVEL": "warning",
            "MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS": str(int(a.timeout) + 30)}
    env = dict(base, **RAISED)
    bins = [("moat", a.moat)]
    if a.moat_alt:
        alt = a.moat_alt
        name, _, path = alt.partition("=")
        bins.append((f"moat-{name}" if path and "/" not in name else "moat-alt",
                     path if path and "/" not in name else alt))

    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    commit = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"],
                            stdout=subprocess.PIPE, text=True).stdout.strip()
    rgv = subprocess.run([a.rg, "--version"], stdout=subprocess.PIPE,
                         text=True).stdout.splitlines()[0]
    nodev = subprocess.run([a.node, "--version"], stdout=subprocess.PIPE, text=True).stdout.strip()
    when = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    load0 = load()
    print(f"date      {when}, commit {commit}, {os.cpu_count()} cpus, load {load0} at start")
    for label, b in bins:
        print(f"{label:<9} {b} (mode {mode})")
    print(f"env       {' '.join(f'{k}={v}' for k, v in env.items())}")
    print("          (moat (defaults): only MODE, LOG_LEVEL and TOOL_TIMEOUT_SECONDS set)")
    print(f"peer      server-filesystem {a.fs_server} (node {nodev}), MCP over stdio, "
          "initialize first")
    print(f"ripgrep   {rgv} ({a.rg})")
    print(f"method    each call timed from writing the request to reading the whole answer "
          f"line; reps interleaved; A {a.reps} reps (paged listing {a.page_reps}), "
          f"B {a.reps_b}; medians in ms [q1, q3]; timeout {a.timeout:.0f} s per call")

    out = {"date": when, "commit": commit, "env": env}
    rss_log = []
    t0 = time.perf_counter()
    labels = [label for label, _ in bins]

    if a.only in (None, "a"):
        ntree = sum(1 for d, _, fs in os.walk(a.tree) for f in fs
                    if not os.path.islink(os.path.join(d, f)))
        print(f"\ntree      {a.tree}: {ntree} files; load {load()}")
        moats = [moat_server(label, b, a.tree, env) for label, b in bins]
        defaults = moat_server("moat (defaults)", a.moat, a.tree, base)
        fs = fs_server(a.node, a.fs_server, a.tree)
        a.defaults = defaults
        for s in moats + [defaults, fs]:
            s.start()
        part_a(a, moats, fs, rss_log, out)
        for s in moats + [defaults, fs]:
            s.close()

    if a.only in (None, "b"):
        ws, subsets = prepare(a.tree, a.cache)
        print(f"\nworkspace {ws} (built once); load {load()}")
        gmoats = [moat_server(label, b, ws, env) for label, b in bins]
        gdefaults = moat_server("moat (defaults)", a.moat, ws, base)
        gfs = fs_server(a.node, a.fs_server, ws)
        for s in gmoats + [gdefaults, gfs]:
            s.start()
        part_b(a, gmoats, gdefaults, gfs, ws, subsets, rss_log, out)
        peaks = [m.rss()[2] for m in gmoats]
        for s in gmoats + [gdefaults, gfs]:
            s.close()
        out["peak_hwm_mib"] = dict(zip(labels, peaks))

    print_rss(rss_log, labels, "2nd process")
    print("  2nd process: server-filesystem during A, the moat at default limits during B.")
    if "peak_hwm_mib" in out:
        print("  peak Σ VmHWM of the B process tree: " + ", ".join(
            f"{k} {v:.1f} MiB" for k, v in out["peak_hwm_mib"].items()))
    out["rss"] = [{"after": l, "moat": m, "other": o} for l, m, o in rss_log]
    print(f"\nelapsed   {time.perf_counter() - t0:.0f} s; load {load()} at the end")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    if not a.no_plot and rss_log:
        plot(a.plot, out, rss_log, labels,
             f"bench/growth.py, {when}, commit {commit}, {os.cpu_count()} cpus, "
             f"load {load0} at start, {load()} at the end; moat mode {mode}, raised limits "
             f"(see the header)")


if __name__ == "__main__":
    main()
