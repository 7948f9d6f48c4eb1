#!/usr/bin/env python3
"""Per-request cost account of moat: where the CPU time of one call goes.

For each case (list_directory of a 100-entry directory and read_file of a
50 KB source file over stdio, read_file of a 2 KB file over HTTP), the
driver starts `moat serve` (confined workers), warms it, and makes CALLS
sequential calls. Around the measured calls it reads, from /proc, the user
and system CPU time of every thread of the broker and of every worker
process, and prints them per call, in microseconds, by thread role:

* broker threads: `moat-stdin` (reads and frames requests), the runtime
  (`moat`, parsing, validation, dispatch, rendering, content controls,
  JSON), `moat-stdout` (writes answers), the HTTP runtime's workers;
* workers: user time (the tool's own work) and system time (the system
  calls, under Landlock and seccomp).

With `--perf` it also samples the broker and the workers with `perf record`
during a second, equal run, and sorts the samples into groups by symbol:
content controls (redaction, injection scoring, their regex and literal
engines), byte scans, JSON, rendering, the frame codec, allocation and copies, the async
runtime and HTTP, and the kernel (system calls, scheduling, the sandbox's
checks). The two parts together say where each microsecond goes.

Standard library only (and `perf` for `--perf`). Usage:

    python3 bench/account.py --moat target/release/moat [--calls 4000] [--perf]

The workspace is generated in a temporary directory: `src/big.rs` (about
50 KB of the worker's own Rust sources), `src/small.rs` (60 lines, about
2 KB), `dir100/` (10 directories and 90 files).
"""

import argparse
import http.client
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from search_driver import MODERN_META, Moat  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICK = os.sysconf("SC_CLK_TCK")

# Symbol groups for `--perf`, first match wins.
GROUPS = [
    ("content controls", re.compile(
        r"moat_broker::content|moat_worker::redact|moat_worker::literals|aho_corasick|"
        r"regex_automata|regex::|regex_syntax|unicode_normalization")),
    ("byte scans (memchr: lines, escapes)", re.compile(r"memchr")),
    ("JSON", re.compile(r"serde_json|json_out|jsonrpc|serde_core|serde::")),
    ("rendering", re.compile(r"moat_broker::tool|render|moat_broker::cursor")),
    ("frame codec", re.compile(r"postcard|moat_protocol|frame")),
    ("allocation and copies", re.compile(
        r"malloc|free|realloc|memmove|memcpy|memset|_int_|alloc::|cfree|unlink_chunk|"
        r"tcache|sysmalloc|drop_in_place")),
    ("async runtime and HTTP", re.compile(r"tokio|hyper|mio::|http::|futures|parking_lot")),
    ("the worker's tool code", re.compile(r"moat_worker")),
    ("broker, other", re.compile(r"moat_broker")),
]


def make_workspace(root):
    ws = os.path.join(root, "ws")
    os.makedirs(os.path.join(ws, "src"))
    big = []
    size = 0
    for name in ["worker/src/symbols/mod.rs", "worker/src/symbols/lexical.rs",
                 "worker/src/walk.rs", "worker/src/git/mod.rs"]:
        with open(os.path.join(REPO, name), encoding="utf-8") as f:
            for line in f:
                if size + len(line.encode()) > 51_200:
                    break
                big.append(line)
                size += len(line.encode())
    with open(os.path.join(ws, "src", "big.rs"), "w", encoding="utf-8") as f:
        f.write("".join(big))
    with open(os.path.join(ws, "src", "small.rs"), "w", encoding="utf-8") as f:
        for i in range(1, 61):
            f.write(f"fn line_{i:02}() -> u32 {{ {i} }} // a small file for the load run\n")
    d = os.path.join(ws, "dir100")
    os.makedirs(d)
    for i in range(10):
        os.makedirs(os.path.join(d, f"module_{i:02}"))
    for i in range(90):
        with open(os.path.join(d, f"file_{i:03}.rs"), "w", encoding="utf-8") as f:
            f.write(f"pub fn f{i}() {{}}\n" * (i % 7 + 1))
    return ws


def children(pid):
    """Every descendant process of `pid` (a child belongs to the thread that
    started it, so every thread's list is read)."""
    out = []
    kids = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids.extend(int(x) for x in f.read().split())
        except OSError:
            continue
    for k in kids:
        out.append(k)
        out.extend(children(k))
    return out


def thread_times(pid):
    """{(role, tid): (user ticks, system ticks)} for every thread of `pid`."""
    times = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return times
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        times[(name, int(tid))] = (int(fields[11]), int(fields[12]))
    return times


def snapshot(broker):
    """CPU ticks of the broker's threads and of the worker processes."""
    snap = {}
    for (name, tid), t in thread_times(broker).items():
        snap[("broker", name, tid)] = t
    for child in children(broker):
        for (name, tid), t in thread_times(child).items():
            snap[("worker", name, child)] = tuple(
                a + b for a, b in zip(snap.get(("worker", name, child), (0, 0)), t))
    return snap


def account(before, after, calls):
    """Per-call microseconds by role: {role: (user, system)}."""
    roles = {}
    for key, (u1, s1) in after.items():
        u0, s0 = before.get(key, (0, 0))
        side, name, _ = key
        role = f"{side}: {re.sub(r'[-_]?[0-9]+$', '', name)}"
        u, s = roles.get(role, (0, 0))
        roles[role] = (u + u1 - u0, s + s1 - s0)
    per = {}
    for role, (u, s) in roles.items():
        per[role] = (u * 1e6 / TICK / calls, s * 1e6 / TICK / calls)
    return per


class Http:
    """A keep-alive client of `moat serve --transport http`."""

    def __init__(self, binary, ws, env):
        self.token = "acct-" + secrets.token_hex(16)
        full = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent",
                "MOAT_HTTP__PORT": "0", "MOAT_HTTP__BEARER_TOKEN": self.token}
        full.update(env)
        self.log = tempfile.NamedTemporaryFile(mode="w+", delete=False)
        self.proc = subprocess.Popen([binary, "serve", "--transport", "http", "--workspace", ws],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.log, env=full)
        addr = None
        for _ in range(200):
            with open(self.log.name) as f:
                for line in f:
                    if '"http.listening"' in line:
                        addr = json.loads(line).get("addr")
            if addr:
                break
            time.sleep(0.05)
        if not addr:
            sys.exit("moat http: no http.listening line")
        host, port = addr.rsplit(":", 1)
        self.conn = http.client.HTTPConnection(host, int(port))
        self.pid = self.proc.pid

    def call(self, tool, args):
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": tool, "arguments": args, "_meta": MODERN_META}})
        self.conn.request("POST", "/mcp", body, {
            "Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
            "MCP-Protocol-Version": MODERN_META["io.modelcontextprotocol/protocolVersion"],
            "Mcp-Method": "tools/call", "Mcp-Name": tool})
        r = self.conn.getresponse()
        data = r.read()
        if r.status != 200 or b'"isError":false' not in data:
            sys.exit(f"moat http failed: {r.status} {data[:300]!r}")

    def close(self):
        self.conn.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)
        os.unlink(self.log.name)


def tids_of(pids):
    """Every thread id of the processes `pids`."""
    out = set()
    for pid in pids:
        try:
            out.update(int(t) for t in os.listdir(f"/proc/{pid}/task"))
        except OSError:
            pass
    return out


def perf_groups(pids, run):
    """Runs `run()` under `perf record` of `pids` (the broker first);
    ({side: {group: share}}, {side: [(share, symbol)]} of the ungrouped)."""
    workers = tids_of(pids[1:])
    data = tempfile.mktemp(suffix=".perf")
    rec = subprocess.Popen(["perf", "record", "-q", "-F", "4999", "-o", data,
                            "-p", ",".join(str(p) for p in pids)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    run()
    rec.send_signal(2)
    rec.wait(timeout=60)
    rep = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "pid,sym",
                          "--stdio", "-q"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True).stdout
    os.unlink(data)
    shares = {}
    others = {}
    for line in rep.splitlines():
        m = re.match(r"\s*([0-9.]+)%\s+(\d+):\S+\s+\[(.)\]\s+(.*)", line)
        if not m:
            continue
        pct, pid, space, sym = float(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
        side = "workers" if pid in workers else "broker"
        if space == "k":
            group = "kernel (system calls, scheduling, sandbox checks)"
        else:
            group = next((g for g, rx in GROUPS if rx.search(sym)), "other")
            if group == "other":
                others.setdefault(side, []).append((pct, sym.strip()[:70]))
        shares.setdefault(side, {}).setdefault(group, 0.0)
        shares[side][group] += pct
    return shares, others


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--moat", required=True)
    ap.add_argument("--calls", type=int, default=4000)
    ap.add_argument("--perf", action="store_true")
    a = ap.parse_args()
    # The answer budget raised so the 50 KB file is answered whole, as the
    # peers of bench/peers.sh answer it (the default budget cuts it at about
    # 40,000 characters, and a cut read is redacted by the worker too).
    env = {"MOAT_OBSERVABILITY__LOG_LEVEL": "info", "MOAT_SANDBOX__MAX_ANSWER_CHARS": "200000"}
    root = tempfile.mkdtemp(prefix="moat-account-")
    try:
        ws = make_workspace(root)
        print(f"moat {a.moat}; {a.calls} sequential calls per case after 300 warm-up calls; "
              f"log level info, answer budget 200,000 characters; load {open('/proc/loadavg').read().split()[0]}")
        cases = [
            ("list_directory dir100, stdio", "stdio", "list_directory", {"path": "dir100"}),
            ("read_file 50 KB, stdio", "stdio", "read_file", {"path": "src/big.rs"}),
            ("read_file 2 KB, HTTP", "http", "read_file", {"path": "src/small.rs"}),
        ]
        for label, transport, tool, args in cases:
            server = Moat(a.moat, ws, env) if transport == "stdio" else Http(a.moat, ws, env)
            pid = server.proc.pid
            for _ in range(300):
                server.call(tool, args)
            before = snapshot(pid)
            t = time.perf_counter()
            for _ in range(a.calls):
                server.call(tool, args)
            wall = (time.perf_counter() - t) / a.calls * 1e6
            per = account(before, snapshot(pid), a.calls)
            total = sum(u + s for u, s in per.values())
            print(f"\n== {label}: {wall:.0f} us per call (round trip), moat CPU {total:.0f} us per call")
            print(f"{'thread':<28} {'user us':>8} {'system us':>10}")
            for role, (u, s) in sorted(per.items(), key=lambda kv: -(kv[1][0] + kv[1][1])):
                if u + s >= 0.5:
                    print(f"{role:<28} {u:>8.1f} {s:>10.1f}")
            if a.perf and shutil.which("perf"):
                pids = [pid] + children(pid)

                def run(server=server, tool=tool, args=args):
                    for _ in range(a.calls):
                        server.call(tool, args)

                shares, others = perf_groups(pids, run)
                for side in ["broker", "workers"]:
                    groups = shares.get(side, {})
                    whole = sum(groups.values()) or 1.0
                    print(f"  {side} samples by group (share of {side} time):")
                    for group, pct in sorted(groups.items(), key=lambda kv: -kv[1]):
                        if pct / whole >= 0.01:
                            print(f"    {group:<52} {100 * pct / whole:5.1f}%")
                    top = sorted(others.get(side, []), reverse=True)[:3]
                    if top:
                        print("    largest in other: " + "; ".join(
                            f"{sym} {100 * pct / whole:.1f}%" for pct, sym in top))
            server.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
