"""Scrape moat's /metrics after a few calls and parse it with the official
Prometheus Python client's parser (prometheus_client.parser).

    python3 tests/judges/metrics_parse.py path/to/moat

Starts `moat serve` over stdio with observability.metrics_addr=127.0.0.1:0
on a small workspace, makes a few calls, scrapes, parses every family and
checks the ones the calls must have produced. Exits non-zero on any
disagreement.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "metrics-judge", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def main() -> int:
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as ws:
        with open(os.path.join(ws, "a.txt"), "w") as f:
            f.write("hello\n")
        env = dict(os.environ)
        env.update(
            MOAT_OBSERVABILITY__METRICS_ADDR="127.0.0.1:0",
            MOAT_SANDBOX__MODE="in-process",
        )
        err_path = os.path.join(ws, "..", os.path.basename(ws) + ".stderr")
        with open(err_path, "w+") as err:
            proc = subprocess.Popen(
                [binary, "serve", "--workspace", ws],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=env,
                text=True,
            )
            try:
                return judge(proc, err_path)
            finally:
                proc.kill()
                proc.wait()
                os.unlink(err_path)


def request(proc, rid, method, params):
    params = dict(params)
    params["_meta"] = META
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + "\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def judge(proc, err_path) -> int:
    addr = None
    for _ in range(300):
        with open(err_path) as f:
            for line in f:
                try:
                    v = json.loads(line)
                except ValueError:
                    continue
                if v.get("message") == "metrics.listening":
                    addr = v["addr"]
        if addr:
            break
        time.sleep(0.05)
    if not addr:
        print("metrics judge: no metrics.listening line")
        return 1
    request(proc, 1, "tools/call", {"name": "read_file", "arguments": {"path": "a.txt"}})
    request(proc, 2, "tools/call", {"name": "read_file", "arguments": {"path": "missing.txt"}})
    request(proc, 3, "tools/list", {})
    with urllib.request.urlopen(f"http://{addr}/metrics", timeout=10) as r:
        ctype = r.headers.get("Content-Type", "")
        text = r.read().decode("utf-8")
    if not ctype.startswith("text/plain; version=0.0.4"):
        print(f"metrics judge: Content-Type {ctype!r}")
        return 1
    families = {f.name: f for f in text_string_to_metric_families(text)}
    problems = []
    calls = families.get("moat_tool_calls")
    if calls is None or calls.type != "counter":
        problems.append("moat_tool_calls is not a counter")
    else:
        got = {(s.labels["tool"], s.labels["outcome"]): s.value for s in calls.samples if s.name.endswith("_total")}
        if got != {("read_file", "ok"): 1.0, ("read_file", "not_found"): 1.0}:
            problems.append(f"moat_tool_calls: {got}")
    hist = families.get("mcp_server_operation_duration_seconds")
    if hist is None or hist.type != "histogram":
        problems.append("mcp_server_operation_duration_seconds is not a histogram")
    else:
        count = sum(s.value for s in hist.samples if s.name.endswith("_count"))
        if count != 3:
            problems.append(f"operation duration count {count}, not 3")
    for p in problems:
        print(f"metrics judge: {p}")
    if not problems:
        print(f"metrics judge: {len(families)} families parsed by prometheus_client, counts agree")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
