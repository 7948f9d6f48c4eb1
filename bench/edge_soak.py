#!/usr/bin/env python3
"""Network soak of moat's HTTP edge (run it through bench/edge-soak.sh).

One `moat serve --transport http` with default settings and OAuth (an
Ed25519 JWKS file made with openssl), its metrics listener on and an audit
file, and for DURATION seconds, all at once:

  valid callers    VALID threads, each with its own token, calling
                   read_file / list_directory / search_code on keep-alive
                   connections; every latency recorded;
  probes           /healthz and /readyz on new connections every 100 ms;
  scraper          /metrics with its token every second;
and the attacks of every class the edge bounds:
  bad tokens       forged signatures on new connections, as fast as slots
                   are given (refusals paced: held connections);
  unknown kids     tokens naming random kids (JWKS refreshes, bounded);
  stalled bodies   a valid token, a head and half a body, then silence;
  slowloris        half a request head, then silence;
  metrics idlers   idle connections to the metrics listener;
  non-readers      calls for a ~5.9 MB answer on connections with a 4 KiB
                   receive buffer that never read;
  large ids        tools/call with 100 KB ids and credential-shaped ids
                   (log lines and the audit trail);
  notifications    tools/call sent as notifications and with a null id;
  mirrored twice   Mcp-Method sent twice.

Reported: the valid callers' p50/p99/max and errors, the probes' answered
share and p99, the scrapes, the broker's peak RSS (VmHWM) and its RSS and
fds sampled every second, its worker processes, and the audit trail's
completeness (every valid call and every large-id call the broker answered
has exactly one event). Goals (exit 1 if one fails): valid p99 < 100 ms,
every probe answered, RSS < 128 MiB, no audit event lost, fds and workers
back to their idle counts once the attacks stop.

Python standard library (and the openssl command) only.
"""

import argparse
import base64
import http.client
import json
import os
import random
import re
import socket
import subprocess
import sys
import threading
import time

ISSUER = "https://issuer.soak"
AUDIENCE = "https://moat.soak/mcp"
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "edge-soak", "version": "0"},
}
METRICS_TOKEN = "edge-soak-metrics-token-0123456789abcdef"


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Keys:
    """An Ed25519 key made with openssl; tokens signed with it."""

    def __init__(self, d):
        self.dir = d
        self.pem = os.path.join(d, "key.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", self.pem], check=True)
        der = subprocess.run(["openssl", "pkey", "-in", self.pem, "-pubout", "-outform", "DER"],
                             check=True, capture_output=True).stdout
        self.jwks = {"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "k1", "alg": "EdDSA",
                               "x": b64(der[-32:])}]}

    def token(self, sub, kid="k1", forge=False):
        now = int(time.time())
        head = b64(json.dumps({"alg": "EdDSA", "kid": kid, "typ": "at+jwt"}).encode())
        body = b64(json.dumps({"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "exp": now + 7200,
                               "iat": now - 10, "scope": "moat:read"}).encode())
        signing = f"{head}.{body}".encode()
        if forge:
            return f"{head}.{body}.{b64(os.urandom(64))}"
        msg = os.path.join(self.dir, "msg")
        with open(msg, "wb") as f:
            f.write(signing)
        sig = subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", self.pem, "-rawin", "-in", msg],
                             check=True, capture_output=True).stdout
        return f"{head}.{body}.{b64(sig)}"


def control_bytes(n):
    line = bytes([1, 2, 3, 4, 5, 6, 7, 0x0E, 0x0F, 0x10, 0x11, 0x12][i % 12] for i in range(240)) + b"\n"
    return (line * (n // len(line) + 1))[:n]


def status(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def fds(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def workers(pid):
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


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def call_body(rid, tool, args, id_text=None):
    params = {"name": tool, "arguments": args, "_meta": META}
    body = {"jsonrpc": "2.0", "method": "tools/call", "params": params}
    if rid is not None:
        body["id"] = rid
    text = json.dumps(body)
    if id_text is not None:
        text = text[:-1] + f',"id":{id_text}}}'
    return text.encode()


def raw(addr, token, body, extra="", length=None, close=True):
    length = len(body) if length is None else length
    head = (f"POST /mcp HTTP/1.1\r\nHost: {addr[0]}:{addr[1]}\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nAccept: application/json\r\n"
            f"MCP-Protocol-Version: {MODERN}\r\nMcp-Method: tools/call\r\n{extra}"
            f"Content-Length: {length}\r\n{'Connection: close' + chr(13) + chr(10) if close else ''}\r\n")
    return head.encode() + body


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.lat = []
        self.errors = 0
        self.reconnects = 0
        self.ids = []

    def add(self, seconds, rid):
        with self.lock:
            self.lat.append(seconds)
            self.ids.append(rid)


def valid_caller(addr, token, n, stats, stop):
    tools = [("read_file", {"path": "a.txt"}), ("list_directory", {"path": "src"}),
             ("search_code", {"pattern": "beta", "path": "src"})]
    conn = http.client.HTTPConnection(addr[0], addr[1], timeout=30)
    i = 0
    while not stop.is_set():
        tool, args = tools[i % len(tools)]
        rid = f"valid-{n}-{i}"
        body = call_body(rid, tool, args)
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                   "Accept": "application/json", "MCP-Protocol-Version": MODERN,
                   "Mcp-Method": "tools/call", "Mcp-Name": tool}
        t0 = time.monotonic()
        try:
            conn.request("POST", "/mcp", body, headers)
            r = conn.getresponse()
            data = r.read()
            took = time.monotonic() - t0
            doc = json.loads(data)
            if r.status != 200 or doc.get("result", {}).get("isError"):
                with stats.lock:
                    stats.errors += 1
            else:
                stats.add(took, rid)
        except (OSError, http.client.HTTPException, ValueError):
            with stats.lock:
                stats.errors += 1
                stats.reconnects += 1
            conn.close()
            conn = http.client.HTTPConnection(addr[0], addr[1], timeout=30)
        i += 1
        time.sleep(0.02)


def prober(addr, paths, stats, stop, token=None, every=0.1):
    while not stop.is_set():
        for path in paths:
            t0 = time.monotonic()
            try:
                c = http.client.HTTPConnection(addr[0], addr[1], timeout=30)
                headers = {"Authorization": f"Bearer {token}"} if token else {}
                c.request("GET", path, headers=headers)
                r = c.getresponse()
                r.read()
                c.close()
                ok = r.status in (200, 503) if path == "/readyz" else r.status == 200
                if ok:
                    stats.add(time.monotonic() - t0, path)
                else:
                    with stats.lock:
                        stats.errors += 1
            except (OSError, http.client.HTTPException):
                with stats.lock:
                    stats.errors += 1
        time.sleep(every)


def hold(n, opener, stop, label, counts, lifetime=None):
    """Keeps n connections from `opener` open, reopening closed ones (and,
    with `lifetime`, ones older than that: a connection that never reads
    cannot see its own closing behind the data it left unread)."""
    conns = []
    born = {}
    while not stop.is_set():
        alive = []
        now = time.monotonic()
        for c in conns:
            if lifetime is not None and now - born.get(id(c), now) > lifetime:
                c.close()
                continue
            # Peeked, never read: a non-reader's answer stays unread.
            try:
                c.setblocking(False)
                data = c.recv(1, socket.MSG_PEEK)
                if data:
                    alive.append(c)
                else:
                    c.close()
            except BlockingIOError:
                alive.append(c)
            except OSError:
                c.close()
        conns = alive
        while len(conns) < n and not stop.is_set():
            try:
                c = opener()
                born[id(c)] = time.monotonic()
                conns.append(c)
                counts[label] = counts.get(label, 0) + 1
            except OSError:
                break
        time.sleep(0.05)
    for c in conns:
        c.close()


def flood(addr, make, stop, label, counts, every=0.01):
    """New connections, one request each, as fast as `every` allows."""
    held = []
    while not stop.is_set():
        try:
            s = socket.create_connection(addr, timeout=5)
            s.sendall(make())
            held.append(s)
            counts[label] = counts.get(label, 0) + 1
        except OSError:
            pass
        if len(held) > 64:
            held.pop(0).close()
        time.sleep(every)
    for s in held:
        s.close()


def exchange(addr, data):
    s = socket.create_connection(addr, timeout=30)
    s.sendall(data)
    out = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        out += chunk
    s.close()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--moat", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--duration", type=float, default=60)
    ap.add_argument("--valid", type=int, default=4)
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="one more setting for the broker (to compare with the defaults)")
    a = ap.parse_args()
    d = a.dir
    ws = os.path.join(d, "ws")
    os.makedirs(os.path.join(ws, "src"), exist_ok=True)
    with open(os.path.join(ws, "a.txt"), "w") as f:
        f.write("alpha\n")
    with open(os.path.join(ws, "src", "lib.rs"), "w") as f:
        f.write("pub fn beta() {}\n" * 50)
    with open(os.path.join(ws, "ctl.txt"), "wb") as f:
        f.write(control_bytes(950_000))
    keys = Keys(d)
    jwks = os.path.join(d, "jwks.json")
    with open(jwks, "w") as f:
        json.dump(keys.jwks, f)
    os.chmod(jwks, 0o600)
    audit = os.path.join(d, "audit.jsonl")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": "/nonexistent",
           "MOAT_HTTP__PORT": "0", "MOAT_HTTP__AUTH": "oauth",
           "MOAT_HTTP__OAUTH__ISSUER": ISSUER, "MOAT_HTTP__OAUTH__AUDIENCE": AUDIENCE,
           "MOAT_HTTP__OAUTH__JWKS_PATH": jwks, "MOAT_HTTP__OAUTH__REQUIRED_SCOPE": "moat:read",
           "MOAT_OBSERVABILITY__METRICS_ADDR": "127.0.0.1:0",
           "MOAT_OBSERVABILITY__METRICS_TOKEN": METRICS_TOKEN,
           "MOAT_OBSERVABILITY__AUDIT_PATH": audit,
           # Only to let the non-readers' answers be large: every other
           # setting is the default.
           "MOAT_SANDBOX__MAX_ANSWER_CHARS": "4000000"}
    env.update(kv.split("=", 1) for kv in a.env)
    log_path = os.path.join(d, "broker.log")
    log = open(log_path, "wb")
    proc = subprocess.Popen([a.moat, "serve", "--transport", "http", "--workspace", ws],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, env=env)
    addr = maddr = None
    until = time.monotonic() + 20
    while time.monotonic() < until and (addr is None or maddr is None):
        text = open(log_path, errors="replace").read()
        m = re.search(r'"http.listening","addr":"([0-9.]+):(\d+)"', text)
        n = re.search(r'"metrics.listening","addr":"([0-9.]+):(\d+)"', text)
        addr = (m.group(1), int(m.group(2))) if m else None
        maddr = (n.group(1), int(n.group(2))) if n else None
        if proc.poll() is not None:
            raise SystemExit(f"broker exited; see {log_path}")
        time.sleep(0.05)
    if addr is None or maddr is None:
        raise SystemExit(f"broker not listening; see {log_path}")
    pid = proc.pid
    tokens = [keys.token(f"caller-{i}") for i in range(a.valid)]
    attacker = keys.token("attacker")
    # Warm up: workers, allocator, the remembered tokens.
    for t in tokens:
        exchange(addr, raw(addr, t, call_body("warm", "read_file", {"path": "a.txt"}),
                           "Mcp-Name: read_file\r\n"))
    time.sleep(1)
    idle = {"rss": status(pid, "VmRSS:"), "fds": fds(pid), "workers": len(workers(pid))}
    stop = threading.Event()
    counts = {}
    valid, probes, scrapes = Stats(), Stats(), Stats()
    big_ids = []
    big_lock = threading.Lock()

    def big_id_caller():
        i = 0
        while not stop.is_set():
            rid = f"big-{i}-" + "x" * 100_000
            secret = "ghp_" + "Q" * 36
            for id_text in (json.dumps(rid), json.dumps(f"{secret} caller=admin")):
                try:
                    out = exchange(addr, raw(addr, attacker, call_body(None, "read_file", {"path": "a.txt"},
                                                                       id_text), "Mcp-Name: read_file\r\n"))
                    if out.startswith(b"HTTP/1.1 200") and id_text.startswith('"big-'):
                        with big_lock:
                            big_ids.append(f"big-{i}-")
                except OSError:
                    pass
            counts["large ids"] = counts.get("large ids", 0) + 2
            i += 1
            time.sleep(0.05)

    def notifications():
        while not stop.is_set():
            for id_text in (None, "null"):
                try:
                    exchange(addr, raw(addr, attacker, call_body(None, "read_file", {"path": "a.txt"}, id_text),
                                       "Mcp-Name: read_file\r\n"))
                except OSError:
                    pass
            try:
                exchange(addr, raw(addr, attacker, call_body(7, "read_file", {"path": "a.txt"}),
                                   "Mcp-Name: read_file\r\nMcp-Method: tools/list\r\n"))
            except OSError:
                pass
            counts["notifications"] = counts.get("notifications", 0) + 3
            time.sleep(0.05)

    def non_reader():
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(5)
        s.connect(addr)
        s.sendall(raw(addr, attacker, call_body(1, "read_file", {"path": "ctl.txt"}), "Mcp-Name: read_file\r\n",
                      close=False))
        return s

    def stalled_body():
        s = socket.create_connection(addr, timeout=5)
        s.sendall(raw(addr, attacker, b'{"jsonrpc"', "Mcp-Name: read_file\r\n", length=1000, close=False))
        return s

    def slowloris():
        s = socket.create_connection(addr, timeout=5)
        s.sendall(f"POST /mcp HTTP/1.1\r\nHost: {addr[0]}:{addr[1]}\r\nX-Slow: ".encode())
        return s

    forged = [keys.token(f"forged-{i}", forge=True) for i in range(8)]
    threads = [
        threading.Thread(target=flood, args=(addr, lambda: raw(addr, random.choice(forged),
                         call_body(1, "read_file", {"path": "a.txt"}), "Mcp-Name: read_file\r\n"),
                         stop, "bad tokens", counts)),
        threading.Thread(target=flood, args=(addr, lambda: raw(addr, keys.token("x", kid=f"r{random.random()}",
                         forge=True), call_body(1, "read_file", {"path": "a.txt"}), "Mcp-Name: read_file\r\n"),
                         stop, "unknown kids", counts, 0.05)),
        threading.Thread(target=hold, args=(150, stalled_body, stop, "stalled bodies", counts)),
        threading.Thread(target=hold, args=(150, slowloris, stop, "slowloris", counts)),
        threading.Thread(target=hold, args=(40, lambda: socket.create_connection(maddr, timeout=5), stop,
                                            "metrics idlers", counts)),
        # Reopened past the write timeout (10 s), which closes them.
        threading.Thread(target=hold, args=(40, non_reader, stop, "non-readers", counts, 12.0)),
        threading.Thread(target=big_id_caller),
        threading.Thread(target=notifications),
        threading.Thread(target=prober, args=(addr, ["/healthz", "/readyz"], probes, stop)),
        threading.Thread(target=prober, args=(maddr, ["/metrics"], scrapes, stop, METRICS_TOKEN, 1.0)),
    ]
    threads += [threading.Thread(target=valid_caller, args=(addr, tokens[i], i, valid, stop))
                for i in range(a.valid)]
    samples = []
    start = time.monotonic()
    for t in threads:
        t.daemon = True
        t.start()
    while time.monotonic() - start < a.duration:
        time.sleep(1)
        samples.append((status(pid, "VmRSS:"), fds(pid), len(workers(pid))))
    stop.set()
    for t in threads:
        t.join(timeout=30)
    # The attacks are over: idle counts come back.
    time.sleep(12)
    after = {"rss": status(pid, "VmRSS:"), "fds": fds(pid), "workers": len(workers(pid))}
    peak = status(pid, "VmHWM:")
    proc.terminate()
    code = proc.wait(timeout=60)
    log.close()
    # The audit trail (and its rotated part).
    events = []
    for p in (audit + ".1", audit):
        if os.path.exists(p):
            with open(p) as f:
                events += [json.loads(line) for line in f if line.strip()]
    audited = {}
    for e in events:
        rid = str(e.get("rpc_id", ""))
        audited[rid] = audited.get(rid, 0) + 1
    missing_valid = [r for r in valid.ids if audited.get(r, 0) != 1]
    big_seen = sum(1 for e in events if str(e.get("rpc_id", "")).startswith("big-"))
    longest = max((len(json.dumps(e)) for e in events), default=0)
    leaked = sum(1 for e in events if "ghp_QQQQ" in json.dumps(e))
    v99 = pct(valid.lat, 99) * 1000
    p_rss = max(s[0] for s in samples if s[0]) / 1024
    print(f"\nedge soak: {a.duration:.0f} s, {a.valid} valid callers, broker pid {pid}\n")
    print("| measure | value |")
    print("|---|---:|")
    print(f"| valid calls answered | {len(valid.lat)} (errors {valid.errors}, reconnects {valid.reconnects}) |")
    print(f"| valid p50 / p99 / max (ms) | {pct(valid.lat, 50)*1000:.1f} / {v99:.1f} / {max(valid.lat, default=0)*1000:.1f} |")
    print(f"| probes answered | {len(probes.lat)} of {len(probes.lat) + probes.errors}; p99 {pct(probes.lat, 99)*1000:.1f} ms |")
    print(f"| scrapes answered | {len(scrapes.lat)} of {len(scrapes.lat) + scrapes.errors} |")
    print(f"| broker RSS idle / max sampled / peak (MiB) | {idle['rss']/1024:.1f} / {p_rss:.1f} / {peak/1024:.1f} |")
    print(f"| broker RSS after (MiB) | {after['rss']/1024:.1f} |")
    print(f"| broker fds idle / max / after | {idle['fds']} / {max(s[1] for s in samples if s[1])} / {after['fds']} |")
    print(f"| workers idle / after | {idle['workers']} / {after['workers']} |")
    print(f"| audit events / longest (bytes) | {len(events)} / {longest} |")
    print(f"| valid calls without exactly one event | {len(missing_valid)} |")
    print(f"| large-id calls answered / audited | {len(big_ids)} / {big_seen} |")
    print(f"| credential-shaped ids in the trail | {leaked} |")
    print(f"| broker exit | {code} |")
    print("| attack connections/requests | " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + " |")
    goals = [
        ("valid p99 < 100 ms", v99 < 100),
        ("no valid call failed", valid.errors == 0),
        ("every probe answered", probes.errors == 0),
        ("every scrape answered", scrapes.errors == 0),
        ("RSS < 128 MiB", peak / 1024 < 128),
        ("no audit event lost", not missing_valid and big_seen >= len(big_ids)),
        ("one event <= 4096 bytes", longest < 4096),
        ("no credential in the trail", leaked == 0),
        ("fds back to idle", after["fds"] <= idle["fds"] + 4),
        ("workers back to idle", after["workers"] == idle["workers"]),
        ("broker exit 0", code == 0),
    ]
    print()
    for name, ok in goals:
        print(f"  {'PASS' if ok else 'FAIL'}  {name}")
    return 0 if all(ok for _, ok in goals) else 1


if __name__ == "__main__":
    sys.exit(main())
