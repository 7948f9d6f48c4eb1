#!/usr/bin/env python3
"""Soak driver for moat (run it through bench/soak.sh).

Starts two brokers on one generated workspace, `moat serve` over stdio and
`moat serve --transport http`, and for DURATION seconds keeps each at its
concurrency limit with a mix of tool calls (reads, listings, searches, symbols,
overview, git, refusals, invalid calls) and a few heavy searches over a large
generated tree that outlive the (lowered) tool timeout. Meanwhile it SIGKILLs
a random worker of a random broker every so often (workers are found as the
broker's children in /proc), samples each broker's open fds and RSS every
second, and watches its children for zombies.

Pass criteria (all printed, exit status 1 if any fails):
  * every request is answered exactly once, with its own id; none is lost,
    none answered twice, no answer carries an id that was never sent;
  * no zombie child lingers (seen in two samples more than a second apart),
    and none is left at the end;
  * some requests ran past the deadline and were answered at it (partial
    results with timed_out, or a timed_out error);
  * each broker's fd count and RSS are flat: over stdio the last minute's
    maximum fd count is at most the first minute's plus FD_SLACK (over HTTP
    it moves with the open client connections); after the load, with every
    client connection closed, both are back to their idle count before it
    (plus FD_SLACK); the last minute's mean RSS is at most the first
    minute's plus RSS_SLACK_PERCENT percent;
  * after shutdown (end of stdin; SIGTERM), both brokers exit 0 and no worker
    process is left.

Python standard library only.
"""

import argparse
import atexit
import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "moat-soak", "version": "0"},
}
WORKER_ARG = b"__moat_worker"

# ---------------------------------------------------------------------------
# /proc helpers


def children(pid):
    """Child pids of `pid` (all its threads)."""
    out = set()
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    out.update(int(p) for p in f.read().split())
            except OSError:
                pass
    except OSError:
        pass
    return out


def state(pid):
    """The one-letter state of `pid`, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
        return chr(data[data.rindex(b")") + 2])
    except (OSError, ValueError, IndexError):
        return None


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def fd_count(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def processes_of(binary):
    """Live (non-zombie) processes whose executable is `binary`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            exe = os.readlink(f"/proc/{entry}/exe")
        except OSError:
            continue
        if exe == binary and state(int(entry)) not in (None, "Z"):
            found.append(int(entry))
    return found


# ---------------------------------------------------------------------------
# The workspace


WORDS = (
    "alpha beta gamma delta request response worker broker sandbox fence "
    "token buffer stream socket parse render search symbol overview limit "
    "deadline budget retry shutdown signal kernel landlock seccomp policy"
).split()
# None has nine letters: the heavy search's pattern matches nothing.
NON_ASCII_WORDS = "naïve größe café über straße ångström señor déjà".split()


def generate(ws, big_files, big_kib, rng):
    """A small project (git history included) plus `big/`, a large untracked
    tree for the heavy searches."""
    os.makedirs(os.path.join(ws, "src", "pkg"), exist_ok=True)
    os.makedirs(os.path.join(ws, "docs"), exist_ok=True)
    for i in range(40):
        with open(os.path.join(ws, "src", "pkg", f"mod_{i:02}.py"), "w") as f:
            f.write(f'"""Module {i}."""\n\n')
            for j in range(30):
                f.write(f"def handler_{i}_{j}(request):\n")
                f.write(f"    return {' + '.join(repr(w) for w in rng.sample(WORDS, 3))}\n\n")
            f.write(f"class Service{i}:\n    limit = {i * 7}\n")
    for i in range(20):
        with open(os.path.join(ws, "src", f"unit_{i:02}.rs"), "w") as f:
            for j in range(40):
                f.write(f"pub fn unit_{i}_{j}() -> u32 {{ {j} }} // {rng.choice(WORDS)}\n")
            f.write(f"pub struct Unit{i};\n")
    with open(os.path.join(ws, "docs", "guide.md"), "w") as f:
        f.write("# Guide\n\n" + "\n".join(" ".join(rng.choices(WORDS, k=12)) for _ in range(200)) + "\n")
    with open(os.path.join(ws, "README.md"), "w") as f:
        f.write("# soak workspace\n")
    with open(os.path.join(ws, "pyproject.toml"), "w") as f:
        f.write('[project]\nname = "soak"\nversion = "0.1.0"\n')
    with open(os.path.join(ws, ".env"), "w") as f:
        f.write("API_KEY=not-for-the-client\n")
    git = ["git", "-C", ws, "-c", "user.name=soak", "-c", "user.email=soak@example.invalid"]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": ws, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(git + ["init", "-q"], check=True, env=env)
    with open(os.path.join(ws, ".git", "info", "exclude"), "a") as f:
        f.write("big/\n")
    for n in range(3):
        with open(os.path.join(ws, "CHANGES.md"), "a") as f:
            f.write(f"- change {n}\n")
        subprocess.run(git + ["add", "-A", "src", "docs", "README.md", "pyproject.toml", "CHANGES.md"],
                       check=True, env=env)
        subprocess.run(git + ["commit", "-q", "-m", f"change {n}"], check=True, env=env)
    with open(os.path.join(ws, "CHANGES.md"), "a") as f:
        f.write("- uncommitted\n")

    # The big tree: many files of word salad, each big_kib KiB, with non-ASCII
    # words so that the heavy search's Unicode word boundaries cannot run on
    # the lazy DFA (the regex crate then uses its slower engines).
    line = (" ".join(rng.choices(WORDS + NON_ASCII_WORDS, k=14)) + "\n").encode()
    block = line * (1024 // len(line) + 1)
    body = (block * (big_kib + 1))[: big_kib * 1024]
    for i in range(big_files):
        d = os.path.join(ws, "big", f"d{i // 200:03}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{i:05}.txt"), "wb") as f:
            f.write(body)


# ---------------------------------------------------------------------------
# Requests


class Mix:
    """Random tool calls, weighted."""

    def __init__(self, rng, heavy_every):
        self.rng = rng
        self.heavy_every = heavy_every
        self.count = 0

    def next(self):
        """(kind, method, params)."""
        self.count += 1
        r = self.rng
        if self.heavy_every and self.count % self.heavy_every == 0:
            # Slow for the regex engine: Unicode word boundaries over non-ASCII
            # text, no literal to prefilter on, no match (so no early stop),
            # over the whole big tree (ignored by .git/info/exclude, hence
            # respect_gitignore false): about 65 MB/s here, so the default
            # 3,000 x 64 KiB take ~3 s, past the lowered tool timeout.
            return "heavy", "tools/call", {
                "name": "search_code",
                "arguments": {"pattern": r"(?i)\b\w{9}\b\s+\b\w{9}\b", "path": "big",
                              "regex": True, "max_results": 500, "respect_gitignore": False},
            }
        k = r.random()
        i, j = r.randrange(40), r.randrange(20)
        if k < 0.30:
            start = r.randrange(1, 90)
            return "read", "tools/call", {"name": "read_file", "arguments": {
                "path": f"src/pkg/mod_{i:02}.py", "start_line": start, "end_line": start + r.randrange(1, 40)}}
        if k < 0.38:
            return "read", "tools/call", {"name": "read_file", "arguments": {"path": f"src/unit_{j:02}.rs"}}
        if k < 0.50:
            return "list", "tools/call", {"name": "list_directory", "arguments": {
                "path": r.choice([".", "src", "src/pkg", "docs", "big/d000"])}}
        if k < 0.64:
            return "search", "tools/call", {"name": "search_code", "arguments": {
                "pattern": r.choice(WORDS), "path": "src", "context_lines": r.randrange(0, 3)}}
        if k < 0.72:
            return "symbol", "tools/call", {"name": "find_symbol", "arguments": {
                "symbol": r.choice([f"handler_{i}_{j}", f"Service{i}", f"unit_{j}_{i}", f"Unit{j}"]),
                "path": "src"}}
        if k < 0.75:
            return "overview", "tools/call", {"name": "project_overview", "arguments": {"path": "src"}}
        if k < 0.80:
            return "git", "tools/call", {"name": "git_log", "arguments": {"limit": r.randrange(1, 5)}}
        if k < 0.83:
            return "git", "tools/call", {"name": "git_diff", "arguments": {"stat_only": r.random() < 0.5}}
        if k < 0.88:
            return "tools/list", "tools/list", {}
        if k < 0.95:
            return "refused", "tools/call", {"name": "read_file", "arguments": {
                "path": r.choice([".env", "../outside", "src/nope.py", "big", "src/pkg/../../../etc/passwd"])}}
        if k < 0.98:
            return "invalid", "tools/call", {"name": "no_such_tool", "arguments": {}}
        return "invalid", "tools/call", {"name": "read_file", "arguments": {"path": 42}}


def outcome(msg):
    """A short label for an answer: ok, tool:<code>, rpc:<code>."""
    if "error" in msg:
        return f"rpc:{msg['error'].get('code')}"
    result = msg.get("result", {})
    sc = result.get("structuredContent") or {}
    if result.get("isError"):
        return f"tool:{sc.get('error', '?')}"
    if sc.get("timed_out") is True:
        return "ok:timed_out"  # partial results at the deadline
    return "ok"


class Ledger:
    """Every id sent and every answer received, per transport."""

    def __init__(self):
        self.lock = threading.Lock()
        self.sent = {}  # id -> (kind, time)
        self.answers = Counter()  # id -> answers received
        self.unknown = []  # answers to ids never sent
        self.outcomes = Counter()  # (kind, outcome) -> n
        self.latency = {}  # kind -> [seconds]
        self.failures = []  # transport-level failures (no answer)

    def send(self, rid, kind):
        with self.lock:
            self.sent[rid] = (kind, time.monotonic())

    def answer(self, msg):
        rid = msg.get("id")
        with self.lock:
            if rid not in self.sent:
                self.unknown.append(msg)
                return
            self.answers[rid] += 1
            if self.answers[rid] == 1:
                kind, t = self.sent[rid]
                self.outcomes[(kind, outcome(msg))] += 1
                self.latency.setdefault(kind, []).append(time.monotonic() - t)

    def fail(self, rid, why):
        with self.lock:
            self.failures.append((rid, why))

    def outstanding(self):
        with self.lock:
            return sum(1 for rid in self.sent if self.answers[rid] == 0)

    def check(self):
        with self.lock:
            lost = [rid for rid in self.sent if self.answers[rid] == 0]
            twice = [rid for rid, n in self.answers.items() if n > 1]
            return len(self.sent), lost, twice, list(self.unknown), list(self.failures)


# ---------------------------------------------------------------------------
# Brokers


def start_broker(binary, ws, env, transport, log_path):
    args = [binary, "serve", "--workspace", ws]
    if transport == "http":
        args += ["--transport", "http"]
    log = open(log_path, "wb")
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE if transport == "stdio"
                            else subprocess.DEVNULL, stderr=log, env=env)
    return proc, log


def http_addr(log_path, proc, timeout=15):
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        with open(log_path, "rb") as f:
            for line in f:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                if ev.get("message") == "http.listening" or ev.get("fields", {}).get("message") == "http.listening":
                    addr = ev.get("addr") or ev.get("fields", {}).get("addr")
                    host, port = addr.rsplit(":", 1)
                    return host, int(port)
        if proc.poll() is not None:
            raise SystemExit(f"http broker exited ({proc.returncode}); see {log_path}")
        time.sleep(0.05)
    raise SystemExit(f"no http.listening within {timeout} s; see {log_path}")


class StdioClient:
    """Keeps `limit` requests in flight on one stdio broker."""

    def __init__(self, proc, ledger, mix, limit):
        self.proc, self.ledger, self.mix = proc, ledger, mix
        self.slots = threading.Semaphore(limit)
        self.next_id = 1
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.non_json = []
        self.reader.start()

    def read(self):
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                self.non_json.append(line[:200])
                continue
            self.ledger.answer(msg)
            self.slots.release()

    def run(self, stop):
        while not stop.is_set():
            if not self.slots.acquire(timeout=0.2):
                continue
            kind, method, params = self.mix.next()
            params = dict(params, _meta=META)
            rid = self.next_id
            self.next_id += 1
            self.ledger.send(rid, kind)
            line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + "\n"
            try:
                self.proc.stdin.write(line.encode())
                self.proc.stdin.flush()
            except OSError as e:
                self.ledger.fail(rid, f"stdin: {e}")
                return

    def drain(self, timeout):
        until = time.monotonic() + timeout
        while self.ledger.outstanding() and time.monotonic() < until:
            time.sleep(0.05)


class HttpClient:
    """`limit` threads, each one keep-alive connection with one request in
    flight at a time."""

    def __init__(self, addr, token, ledger, mix, limit):
        self.addr, self.token, self.ledger, self.mix = addr, token, ledger, mix
        self.limit = limit
        self.lock = threading.Lock()
        self.next_id = 1_000_000_000
        self.status = Counter()

    def fresh(self):
        with self.lock:
            self.next_id += 1
            return self.next_id, self.mix.next()

    def worker(self, stop):
        conn = None
        while not stop.is_set():
            rid, (kind, method, params) = self.fresh()
            params = dict(params, _meta=META)
            body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
            headers = {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "Authorization": f"Bearer {self.token}",
                "MCP-Protocol-Version": MODERN,
                "Mcp-Method": method,
            }
            if "name" in params:
                headers["Mcp-Name"] = params["name"]
            self.ledger.send(rid, kind)
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(*self.addr, timeout=60)
                conn.request("POST", "/mcp", body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                with self.lock:
                    self.status[resp.status] += 1
                if resp.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = None
                self.ledger.answer(json.loads(data))
            except (OSError, http.client.HTTPException, ValueError) as e:
                self.ledger.fail(rid, f"http: {type(e).__name__}: {e}")
                if conn is not None:
                    conn.close()
                conn = None
        if conn is not None:
            conn.close()

    def run(self, stop):
        threads = [threading.Thread(target=self.worker, args=(stop,), daemon=True) for _ in range(self.limit)]
        for t in threads:
            t.start()
        return threads


# ---------------------------------------------------------------------------
# Watchers


class Watch:
    """Per broker: worker kills, zombie sightings, fd and RSS samples."""

    def __init__(self, name, pid):
        self.name, self.pid = name, pid
        self.samples = []  # (t, fds, rss_kib, workers)
        self.workers_seen = set()
        self.zombie_first = {}  # pid -> first time seen as Z
        self.zombie_linger = 0.0
        self.zombies_lingering = set()
        self.kills = 0

    def workers(self):
        kids = children(self.pid)
        return {p for p in kids if WORKER_ARG in cmdline(p)} | {p for p in kids if state(p) == "Z"}

    def sample(self, t0):
        now = time.monotonic()
        kids = children(self.pid)
        self.workers_seen |= {p for p in kids if WORKER_ARG in cmdline(p)}
        zombies = {p for p in kids if state(p) == "Z"}
        for p in zombies:
            first = self.zombie_first.setdefault(p, now)
            linger = now - first
            self.zombie_linger = max(self.zombie_linger, linger)
            if linger > 1.0:
                self.zombies_lingering.add(p)
        for p in list(self.zombie_first):
            if p not in zombies:
                del self.zombie_first[p]
        self.samples.append((now - t0, fd_count(self.pid), rss_kib(self.pid), len(kids - zombies)))


def window(samples, lo, hi):
    return [s for s in samples if lo <= s[0] < hi and s[1] is not None and s[2] is not None]


# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Attacks: hostile load while a prober measures ping latency on the same
# transport. Each attack is bounded in count and time, 127.0.0.1 only.

CTL_LINE = bytes([1, 2, 3, 4, 5, 6, 7, 14, 15, 16, 17, 18][i % 12] for i in range(240)) + b"\n"


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def status_kib(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def http_body(rid, method, params):
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()


def raw_request(addr, token, body, length=None):
    head = (f"POST /mcp HTTP/1.1\r\nHost: {addr[0]}:{addr[1]}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Length: {len(body) if length is None else length}\r\n\r\n")
    return head.encode() + body


class HttpProber:
    """Legacy pings on one keep-alive connection every `every` seconds."""

    def __init__(self, addr, token, every=0.02):
        self.addr, self.token, self.every = addr, token, every
        self.lat, self.errors, self.lock = [], 0, threading.Lock()

    def take(self):
        with self.lock:
            lat, err = self.lat, self.errors
            self.lat, self.errors = [], 0
        return lat, err

    def run(self, stop):
        conn, n = None, 0
        while not stop.is_set():
            n += 1
            t = time.monotonic()
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(*self.addr, timeout=10)
                conn.request("POST", "/mcp", body=http_body(n, "ping", {}), headers={
                    "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                    "Authorization": f"Bearer {self.token}"})
                r = conn.getresponse()
                r.read()
                with self.lock:
                    if r.status == 200:
                        self.lat.append(time.monotonic() - t)
                    else:
                        self.errors += 1
            except (OSError, http.client.HTTPException):
                conn = None
                with self.lock:
                    self.errors += 1
            stop.wait(self.every)


class StdioProber:
    """A stdio broker: pings written between the attack's own lines."""

    def __init__(self, proc):
        self.proc, self.wlock = proc, threading.Lock()
        self.pending, self.lat, self.lock = {}, [], threading.Lock()
        self.answers = Counter()
        threading.Thread(target=self.read, daemon=True).start()

    def write(self, data):
        with self.wlock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def read(self):
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            rid = msg.get("id")
            with self.lock:
                t = self.pending.pop(rid, None)
                if t is not None:
                    self.lat.append(time.monotonic() - t)
                else:
                    self.answers[outcome(msg)] += 1

    def take(self):
        with self.lock:
            lat, self.lat = self.lat, []
            return lat, len([1 for t in self.pending.values() if time.monotonic() - t > 10])

    def run(self, stop, every=0.02):
        n = 0
        while not stop.is_set():
            n += 1
            rid = f"ping-{n}"
            line = (json.dumps({"jsonrpc": "2.0", "id": rid, "method": "ping"}) + "\n").encode()
            # Timed from the moment the ping is in the pipe (an attack's own
            # large write may hold the pipe before it: that is the client's
            # side, not the broker's). Registered before the write, so an
            # answer that arrives before the clock is restarted still finds
            # its ping (and is timed from before the write).
            with self.wlock:
                with self.lock:
                    self.pending[rid] = time.monotonic()
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
                with self.lock:
                    if rid in self.pending:
                        self.pending[rid] = time.monotonic()
            stop.wait(every)


def http_ready(addr):
    try:
        c = http.client.HTTPConnection(*addr, timeout=5)
        c.request("GET", "/readyz")
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, json.loads(body or b"{}")
    except (OSError, ValueError, http.client.HTTPException):
        return None, {}


def recovery(check, limit=60.0):
    """Seconds until `check()` holds (None if it never does within `limit`)."""
    t = time.monotonic()
    while time.monotonic() - t < limit:
        if check():
            return time.monotonic() - t
        time.sleep(0.05)
    return None


def run_attacks(a, binary, ws, env, token):
    """Each attack against a fresh broker with default limits (plus the
    token), while a prober pings over the same transport. Prints, per attack:
    ping p50/p99/max and failed pings during it, broker RSS (and per attacking
    connection where that applies), and the recovery time: from the end of the
    attack until a ping answers within 50 ms and /readyz is 200 again."""
    os.makedirs(os.path.join(ws, "attack"), exist_ok=True)
    with open(os.path.join(ws, "attack", "ctl.txt"), "wb") as f:
        f.write(CTL_LINE * (950_000 // len(CTL_LINE)))
    base_env = {k: v for k, v in env.items()
                if not k.startswith(("MOAT_SANDBOX__TOOL_TIMEOUT", "MOAT_HTTP__MAX_", "MOAT_SANDBOX__WORKERS"))}
    base_env["MOAT_SANDBOX__WORKERS"] = str(a.workers)
    http_env = dict(base_env, MOAT_OBSERVABILITY__LOG_LEVEL="info")
    results = []
    ok = True

    def report(name, lat, failed, extra):
        nonlocal ok
        p99 = pct(lat, 99) * 1000
        good = failed == 0 and lat and p99 < 50
        ok &= bool(good)
        line = (f"  [{'PASS' if good else 'FAIL'}] {name:34} ping n={len(lat):4} p50 {pct(lat, 50) * 1000:6.1f} ms  "
                f"p99 {p99:6.1f} ms  max {max(lat or [0]) * 1000:7.1f} ms  failed {failed}  {extra}")
        print(line, flush=True)
        results.append(line)

    def fresh_http(tag):
        log = os.path.join(a.dir, f"attack-{tag}.log")
        proc, fh = start_broker(binary, ws, http_env, "http", log)
        addr = http_addr(log, proc)
        return proc, fh, addr

    def stop_http(proc, fh):
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        fh.close()

    def probe_while(prober, seconds, during=None):
        stop = threading.Event()
        th = threading.Thread(target=prober.run, args=(stop,), daemon=True)
        prober.take()
        th.start()
        peak = 0
        t = time.monotonic()
        while time.monotonic() - t < seconds:
            if during:
                peak = max(peak, during() or 0)
            time.sleep(0.1)
        stop.set()
        th.join(timeout=15)
        return prober.take(), peak

    def ping_fast(addr):
        t = time.monotonic()
        try:
            c = http.client.HTTPConnection(*addr, timeout=5)
            c.request("POST", "/mcp", body=http_body(1, "ping", {}), headers={
                "Content-Type": "application/json", "Authorization": f"Bearer {token}"})
            r = c.getresponse()
            r.read()
            c.close()
            return r.status == 200 and time.monotonic() - t < 0.05
        except (OSError, http.client.HTTPException):
            return False

    print("\nattacks (each on a fresh broker, default limits; ping goal: p99 < 50 ms)", flush=True)

    # 1. Clients that send a request and never read the answer.
    n = a.attack_clients
    proc, fh, addr = fresh_http("nonreading")
    time.sleep(1.0)
    base = rss_kib(proc.pid)
    body = http_body(1, "tools/call", {"name": "read_file", "arguments": {"path": "attack/ctl.txt"}})
    socks = []
    for i in range(n):
        s = socket_small_rcvbuf()
        try:
            s.connect(addr)
            s.sendall(raw_request(addr, token, body))
            socks.append(s)
        except OSError:
            s.close()
    (lat, failed), peak = probe_while(HttpProber(addr, token), a.attack_seconds, lambda: rss_kib(proc.pid))
    hwm = status_kib(proc.pid, "VmHWM:") or 0
    for s in socks:
        s.close()
    t_end = time.monotonic()
    rec = recovery(lambda: ping_fast(addr) and http_ready(addr)[0] == 200)
    after = rss_kib(proc.pid)
    per = (max(peak, hwm) - base) / max(1, len(socks))
    report(f"http: {len(socks)} non-reading clients", lat, failed,
           f"RSS base {base / 1024:.1f} MiB, peak {max(peak, hwm) / 1024:.1f} MiB "
           f"({per:.0f} KiB per connection), after {after / 1024:.1f} MiB; "
           f"recovery {fmt_s(rec)}")
    stop_http(proc, fh)

    # 2. Stalled request bodies.
    proc, fh, addr = fresh_http("stalled")
    time.sleep(1.0)
    socks = []
    for i in range(a.attack_clients * 2):
        s = socket.create_connection(addr)
        s.sendall(raw_request(addr, token, b'{"jsonrpc"', length=1000))
        socks.append(s)
    (lat, failed), _ = probe_while(HttpProber(addr, token), a.attack_seconds)
    st, _ = http_ready(addr)
    call_ok = http_call_ok(addr, token)
    for s in socks:
        s.close()
    rec = recovery(lambda: ping_fast(addr) and http_ready(addr)[0] == 200)
    report(f"http: {len(socks)} stalled bodies", lat, failed,
           f"/readyz during {st}, a tools/call during: {'answered' if call_ok else 'NOT answered'}; "
           f"recovery {fmt_s(rec)}")
    ok &= call_ok
    stop_http(proc, fh)

    # 3. Slot-filling slow calls over HTTP (heavy searches past every slot
    #    and the wait queue).
    proc, fh, addr = fresh_http("slots")
    time.sleep(1.0)
    heavy = http_body(1, "tools/call", {"name": "search_code", "arguments": {
        "pattern": r"(?i)\b\w{9}\b\s+\b\w{9}\b", "path": "big", "regex": True,
        "max_results": 500, "respect_gitignore": False}})
    statuses = Counter()
    slow_stop = threading.Event()

    def slow_client():
        while not slow_stop.is_set():
            try:
                c = http.client.HTTPConnection(*addr, timeout=120)
                c.request("POST", "/mcp", body=heavy, headers={
                    "Content-Type": "application/json", "Authorization": f"Bearer {token}"})
                r = c.getresponse()
                r.read()
                statuses[r.status] += 1
                c.close()
                if r.status == 503:
                    slow_stop.wait(0.2)
            except (OSError, http.client.HTTPException):
                statuses["error"] += 1
    slow = [threading.Thread(target=slow_client, daemon=True) for _ in range(a.attack_clients)]
    for th in slow:
        th.start()
    time.sleep(1.0)
    saturated = Counter()
    (lat, failed), _ = probe_while(HttpProber(addr, token), a.attack_seconds,
                                   lambda: saturated.update([http_ready(addr)[0]]) and 0)
    slow_stop.set()
    rec = recovery(lambda: ping_fast(addr) and http_ready(addr)[0] == 200, limit=120)
    report(f"http: {len(slow)} clients of slow calls", lat, failed,
           f"call statuses {dict(statuses)}, /readyz during {dict(saturated)}; recovery {fmt_s(rec)}")
    for th in slow:
        th.join(timeout=1)
    stop_http(proc, fh)

    # 4. stdio: every slot (and the queue) filled with slow calls.
    sproc, sfh = start_broker(binary, ws, base_env, "stdio", os.path.join(a.dir, "attack-stdio.log"))
    sp = StdioProber(sproc)
    sp.pending["init"] = time.monotonic()
    sp.write((json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "moat-soak", "version": "0"}}}) + "\n").encode())
    time.sleep(1.0)
    for i in range(a.attack_clients):
        sp.write((json.dumps({"jsonrpc": "2.0", "id": f"heavy-{i}", "method": "tools/call",
                              "params": json.loads(heavy)["params"]}) + "\n").encode())
    (lat, failed), _ = probe_while(sp, a.attack_seconds)
    report(f"stdio: {a.attack_clients} slow calls at once", lat, failed,
           f"call outcomes so far {dict(sp.answers)}")

    # 5. stdio: a flood of blank lines between the pings.
    stop = threading.Event()
    flood = b"\n" * (1 << 20)
    sent = [0]

    def flooder():
        while not stop.is_set() and sent[0] < a.blank_mib:
            sp.write(flood)
            sent[0] += 1
    th = threading.Thread(target=flooder, daemon=True)
    th.start()
    (lat, failed), _ = probe_while(sp, a.attack_seconds)
    stop.set()
    th.join(timeout=30)
    report(f"stdio: {sent[0]} MiB of blank lines", lat, failed, "")
    sproc.stdin.close()
    try:
        sproc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        sproc.kill()
        sproc.wait()
    sfh.close()
    print(f"\nattacks: {'PASS' if ok else 'FAIL'}", flush=True)
    return ok


def fmt_s(x):
    return "never (within the limit)" if x is None else f"{x:.2f} s"


def socket_small_rcvbuf():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # Fixed before connecting: the kernel cannot take the answer off the
    # broker's hands into a large receive buffer.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    return s


def http_call_ok(addr, token):
    try:
        c = http.client.HTTPConnection(*addr, timeout=10)
        c.request("POST", "/mcp", body=http_body(1, "tools/call", {"name": "read_file", "arguments": {"path": "README.md"}}),
                  headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
        r = c.getresponse()
        r.read()
        c.close()
        return r.status == 200
    except (OSError, http.client.HTTPException):
        return False



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--moat", required=True)
    ap.add_argument("--dir", required=True, help="scratch directory (workspace, logs)")
    ap.add_argument("--duration", type=float, default=180)
    ap.add_argument("--stdio-limit", type=int, default=8, help="requests in flight over stdio (its MAX_IN_FLIGHT)")
    ap.add_argument("--http-limit", type=int, default=16, help="http.max_in_flight and client threads")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=1.0, help="sandbox.tool_timeout_seconds")
    ap.add_argument("--kill-every", type=float, default=0.5, help="mean seconds between worker kills")
    ap.add_argument("--heavy-every", type=int, default=400, help="one heavy search per this many requests")
    ap.add_argument("--big-files", type=int, default=3000)
    ap.add_argument("--big-kib", type=int, default=64)
    ap.add_argument("--fd-slack", type=int, default=2)
    ap.add_argument("--rss-slack-percent", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--attacks", choices=("after", "only", "none"), default="after",
                    help="the hostile-load phase: after the soak (default), instead of it, or not at all")
    ap.add_argument("--attack-seconds", type=float, default=10.0, help="how long each attack is held")
    ap.add_argument("--attack-clients", type=int, default=100,
                    help="non-reading clients and slow-call clients (stalled bodies: twice this)")
    ap.add_argument("--blank-mib", type=int, default=64, help="MiB of blank lines in the stdio flood")
    a = ap.parse_args()

    seed = a.seed if a.seed is not None else random.randrange(1 << 32)
    rng = random.Random(seed)
    binary = os.path.realpath(a.moat)
    ws = os.path.join(a.dir, "ws")
    t = time.monotonic()
    generate(ws, a.big_files, a.big_kib, rng)
    print(f"soak: workspace generated in {time.monotonic() - t:.1f} s "
          f"({a.big_files} x {a.big_kib} KiB in big/); seed {seed}", flush=True)

    token = "soak-" + os.urandom(16).hex()
    if a.attacks == "only":
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": a.dir,
            "MOAT_HTTP__PORT": "0",
            "MOAT_HTTP__BEARER_TOKEN": token,
            "MOAT_OBSERVABILITY__LOG_LEVEL": "warning",
        }
        return 0 if run_attacks(a, binary, ws, env, token) else 1
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": a.dir,
        "MOAT_SANDBOX__TOOL_TIMEOUT_SECONDS": str(a.timeout),
        "MOAT_SANDBOX__WORKERS": str(a.workers),
        "MOAT_HTTP__PORT": "0",
        "MOAT_HTTP__BEARER_TOKEN": token,
        "MOAT_HTTP__MAX_IN_FLIGHT": str(a.http_limit),
        "MOAT_HTTP__MAX_CONNECTIONS": str(a.http_limit + 8),
        "MOAT_OBSERVABILITY__LOG_LEVEL": "warning",
    }
    stdio_proc, stdio_log = start_broker(binary, ws, env, "stdio", os.path.join(a.dir, "stdio.log"))
    # The HTTP broker logs at info: its address (port 0) is in the `http.listening` event.
    http_env = dict(env, MOAT_OBSERVABILITY__LOG_LEVEL="info")
    http_proc, http_log = start_broker(binary, ws, http_env, "http", os.path.join(a.dir, "http.log"))
    def cleanup():
        # Whatever ends the run (a failed check, an exception), no broker is left behind.
        for proc in (stdio_proc, http_proc):
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    atexit.register(cleanup)
    addr = http_addr(os.path.join(a.dir, "http.log"), http_proc)

    ledgers = {"stdio": Ledger(), "http": Ledger()}
    watches = {"stdio": Watch("stdio", stdio_proc.pid), "http": Watch("http", http_proc.pid)}
    stdio = StdioClient(stdio_proc, ledgers["stdio"], Mix(random.Random(rng.random()), a.heavy_every), a.stdio_limit)
    web = HttpClient(addr, token, ledgers["http"], Mix(random.Random(rng.random()), a.heavy_every), a.http_limit)

    # Idle fd counts before any load (the workers are started by then).
    time.sleep(0.5)
    idle_fds = {"stdio": fd_count(stdio_proc.pid), "http": fd_count(http_proc.pid)}

    stop = threading.Event()
    t0 = time.monotonic()
    stdio_thread = threading.Thread(target=stdio.run, args=(stop,), daemon=True)
    stdio_thread.start()
    http_threads = web.run(stop)

    def watcher():
        while not stop.is_set():
            for w in watches.values():
                w.sample(t0)
            time.sleep(0.25)

    def killer():
        krng = random.Random(rng.random())
        while not stop.wait(krng.expovariate(1 / a.kill_every)):
            w = krng.choice(list(watches.values()))
            live = [p for p in w.workers() if state(p) not in (None, "Z")]
            if live:
                try:
                    os.kill(krng.choice(live), signal.SIGKILL)
                    w.kills += 1
                except OSError:
                    pass

    threading.Thread(target=watcher, daemon=True).start()
    threading.Thread(target=killer, daemon=True).start()
    next_report = 30
    while time.monotonic() - t0 < a.duration:
        time.sleep(1)
        el = time.monotonic() - t0
        if el >= next_report:
            next_report += 30
            print(f"soak: {el:5.0f} s  stdio {len(ledgers['stdio'].sent):6} sent  "
                  f"http {len(ledgers['http'].sent):6} sent  kills {watches['stdio'].kills + watches['http'].kills}",
                  flush=True)
    stop.set()
    elapsed = time.monotonic() - t0
    for th in http_threads:
        th.join(timeout=30)
    stdio_thread.join(timeout=5)
    stdio.drain(timeout=30)
    for w in watches.values():
        w.sample(t0)
    # Idle again: every client connection is closed; give the broker a moment
    # to notice and close its ends.
    after_fds = {}
    for name, w in watches.items():
        until = time.monotonic() + 5
        while True:
            after_fds[name] = fd_count(w.pid)
            if after_fds[name] is not None and after_fds[name] <= idle_fds[name] + a.fd_slack:
                break
            if time.monotonic() > until:
                break
            time.sleep(0.1)
    end_zombies = {name: [p for p in children(w.pid) if state(p) == "Z"] for name, w in watches.items()}
    workers_before = {name: sorted(w.workers()) for name, w in watches.items()}

    # Shutdown: end of input for stdio, SIGTERM for HTTP.
    stdio_proc.stdin.close()
    http_proc.send_signal(signal.SIGTERM)
    codes = {}
    for name, proc in (("stdio", stdio_proc), ("http", http_proc)):
        try:
            codes[name] = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            codes[name] = f"still running after 30 s (killed)"
    stdio.reader.join(timeout=5)
    stdio_log.close()
    http_log.close()
    time.sleep(0.2)
    left = processes_of(binary)
    seen_alive = {name: [p for p in w.workers_seen if state(p) not in (None, "Z") and WORKER_ARG in cmdline(p)]
                  for name, w in watches.items()}

    # ---- report
    ok = True

    def verdict(cond, text):
        nonlocal ok
        ok &= bool(cond)
        print(f"  [{'PASS' if cond else 'FAIL'}] {text}")

    print(f"\nsoak: {elapsed:.0f} s of load; stdio limit {a.stdio_limit}, http limit {a.http_limit}, "
          f"{a.workers} workers each, tool timeout {a.timeout} s, seed {seed}")
    for name in ("stdio", "http"):
        led, w = ledgers[name], watches[name]
        sent, lost, twice, unknown, failures = led.check()
        print(f"\n{name}: {sent} requests ({sent / elapsed:.0f}/s), {w.kills} workers killed, "
              f"{len(w.workers_seen)} distinct workers seen")
        by_kind = Counter()
        for (kind, out), n in sorted(led.outcomes.items()):
            by_kind[kind] += n
        for kind in sorted(by_kind):
            outs = ", ".join(f"{o} {n}" for (k, o), n in sorted(led.outcomes.items()) if k == kind)
            lat = sorted(led.latency.get(kind, [0]))
            print(f"    {kind:10} {by_kind[kind]:6}  p50 {lat[len(lat) // 2] * 1000:7.1f} ms  "
                  f"max {lat[-1] * 1000:8.1f} ms  ({outs})")
        if name == "http":
            print(f"    http status: {dict(web.status)}")
        verdict(not lost and not twice and not unknown and not failures,
                f"every request answered exactly once (lost {len(lost)}, twice {len(twice)}, "
                f"unknown ids {len(unknown)}, transport failures {len(failures)})")
        for rid, why in failures[:5]:
            print(f"        failure id {rid}: {why}")
        overruns = sum(n for (k, o), n in led.outcomes.items() if o in ("ok:timed_out", "tool:timed_out"))
        verdict(overruns > 0, f"deadlines exercised: {overruns} requests answered at their deadline "
                              f"(partial results or timed_out)")
        if name == "stdio":
            verdict(not stdio.non_json, f"every stdout line is JSON ({len(stdio.non_json)} not)")
        verdict(not w.zombies_lingering and not end_zombies[name],
                f"no zombie lingers (longest seen {w.zombie_linger * 1000:.0f} ms; "
                f"lingering > 1 s: {len(w.zombies_lingering)}; at the end: {len(end_zombies[name])})")
        span = min(60.0, elapsed / 3)
        first, last = window(w.samples, 0, span), window(w.samples, elapsed - span, elapsed + 1)
        if first and last:
            f_fd, l_fd = max(s[1] for s in first), max(s[1] for s in last)
            f_rss = sum(s[2] for s in first) / len(first) / 1024
            l_rss = sum(s[2] for s in last) / len(last) / 1024
            peak = max(s[2] for s in w.samples if s[2]) / 1024
            if name == "stdio":
                # Over HTTP the count moves with the open client connections
                # (up to the connection limit); the check after the load covers it.
                verdict(l_fd <= f_fd + a.fd_slack,
                        f"fds flat under load: max {f_fd} in the first {span:.0f} s, {l_fd} in the last "
                        f"(min {min(s[1] for s in last)}, slack {a.fd_slack})")
            else:
                print(f"  [info] fds under load: max {f_fd} in the first {span:.0f} s, {l_fd} in the last "
                      f"(client connections up to {a.http_limit})")
            verdict(after_fds[name] is not None and after_fds[name] <= idle_fds[name] + a.fd_slack,
                    f"fds back to idle after the load: {idle_fds[name]} before it, {after_fds[name]} after "
                    f"(slack {a.fd_slack})")
            verdict(l_rss <= f_rss * (1 + a.rss_slack_percent / 100),
                    f"RSS flat: mean {f_rss:.1f} MiB in the first {span:.0f} s, {l_rss:.1f} MiB in the last "
                    f"(peak {peak:.1f} MiB, slack {a.rss_slack_percent:.0f}%)")
        else:
            verdict(False, "fd and RSS samples")
        verdict(codes[name] == 0, f"broker exit status after shutdown: {codes[name]}")
        verdict(not seen_alive[name], f"all workers gone after shutdown ({len(workers_before[name])} alive "
                                      f"before it, {len(seen_alive[name])} after)")
    verdict(not left, f"no moat process left at all ({left})")
    print(f"\nsoak: {'PASS' if ok else 'FAIL'}")
    if a.attacks == "after":
        ok &= run_attacks(a, binary, ws, env, token)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
