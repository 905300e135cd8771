#!/usr/bin/env python3
"""Benchmark driver: rootgrep (or any MCP stdio server) side by side with a plain command.

It starts the server as a host would (initialize with the roots and elicitation
capabilities, answers `roots/list` with the --root directories), then runs each case k times
after w warm-up calls. A case may name a plain command (e.g. `rg -n error {ROOT}`); the server
call and the command then alternate (A B A B ...), and the ratio is the median of the per-pair
ratios, so load that comes and goes hits both sides.

Fair pairing: while the command runs, the server is stopped (SIGSTOP), so a watcher woken by
the command's reads cannot slow the command down; after SIGCONT the driver waits until the
server's CPU time stops moving (it would otherwise handle those wake-ups inside its next timed
call). The CPU the server spent on the command's reads is reported as `idle cost` per pair.

Cases file (JSON): {"cases": [...]} or a list. A case:
  {"name": "...", "tool": "grep", "arguments": {...},
   "compare": ["rg", "-l", "error", "{ROOT}"],     optional plain command
   "expect_contains": "text" | ["a", "b"],          optional checks on the text answer
   "first": true}                                   optional: only meaningful as a first call
  {"name": "...", "method": "resources/list", "params": {}}   any raw request
Placeholders: {ROOT} (first root) and {NAME} for every --var NAME=VALUE.

Reports per case: median latency of the server call (request written -> response read),
median of the command, the median per-pair ratio (and min/max), server CPU per call, the
response size and the command's output size; and once: spawn -> initialize answered, ping
latency, peak RSS (VmHWM). Linux only for CPU and RSS (reads /proc).
"""

import argparse
import json
import os
import queue
import re
import shlex
import signal
import statistics
import subprocess
import sys
import threading
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of a process, in seconds (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except OSError:
        return 0.0


def proc_status_kib(pid, key):
    """A `VmRSS`/`VmHWM`-style line of /proc/PID/status, in KiB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def peak_rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


class Server:
    """One server process and a JSON-RPC line client that answers its requests."""

    def __init__(self, command, roots, timeout):
        self.roots = roots
        self.timeout = timeout
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, bufsize=1 << 16,
        )
        self.lines = queue.Queue()
        self.next_id = 1
        self.write_lock = threading.Lock()
        self.first_roots_request_at = None
        self.t_init = None
        # False while the server is known to stay busy (a symbol index building): then
        # `settle` does not wait for a quiet that will not come.
        self.waits_for_quiet = True
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        # Server requests (roots/list, elicitation, ping) are answered here, at once, as a
        # host answers them; everything else goes to the waiting request.
        for raw in self.proc.stdout:
            t = time.perf_counter()
            msg = json.loads(raw)
            if "method" in msg and "id" in msg:
                self._answer(msg)
            elif "id" in msg:
                self.lines.put((t, msg, len(raw)))
        self.lines.put((time.perf_counter(), None, 0))

    def send(self, message):
        with self.write_lock:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()

    def request(self, method, params=None):
        """Sends a request; returns (seconds until its response, response, response bytes)."""
        rid = self.next_id
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        t0 = time.perf_counter()
        self.send(message)
        deadline = t0 + self.timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"{method}: no response within {self.timeout} s")
            t, msg, size = self.lines.get(timeout=left)
            if msg is None:
                raise RuntimeError(f"{method}: server exited")
            if msg.get("id") == rid:
                return t - t0, msg, size

    def _answer(self, msg):
        method = msg["method"]
        if method == "roots/list":
            if self.first_roots_request_at is None:
                self.first_roots_request_at = time.perf_counter()
            roots = [{"uri": "file://" + os.path.abspath(r), "name": os.path.basename(r)} for r in self.roots]
            result = {"roots": roots}
        elif method == "elicitation/create":
            result = {"action": "accept", "content": {"confirm": True}}
        elif method == "ping":
            result = {}
        else:
            self.send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": method}})
            return
        self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    def roots_asked_at(self, limit=10.0):
        """When the server first asked for the roots (perf_counter), waiting at most
        `limit` seconds for it; the moment the wait began if it never asked."""
        began = time.perf_counter()
        while self.first_roots_request_at is None and time.perf_counter() - began < limit:
            time.sleep(0.0005)
        return self.first_roots_request_at or began

    def root_status(self):
        """The first root's entry of `list_roots` (its index lines by name)."""
        _, resp, _ = self.request("tools/call", {"name": "list_roots", "arguments": {}})
        result = (resp.get("result") or {}).get("structuredContent") or {}
        return result.get("roots", [{}])[0]

    def initialize(self):
        took, _, _ = self.request("initialize", {
            "protocolVersion": "2025-06-18",
            "capabilities": {"roots": {"listChanged": True}, "elicitation": {}},
            "clientInfo": {"name": "rootgrep-bench", "version": "1"},
        })
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.t_init = time.perf_counter()
        return time.perf_counter() - self.started, took

    def settle(self, quiet=0.2, limit=10.0):
        """Waits until the server's CPU time stops moving for `quiet` seconds."""
        if not self.waits_for_quiet:
            return
        end = time.monotonic() + limit
        last, since = cpu_seconds(self.proc.pid), time.monotonic()
        while time.monotonic() < end:
            time.sleep(0.02)
            now = cpu_seconds(self.proc.pid)
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return

    def cpu_s(self):
        return cpu_seconds(self.proc.pid)

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()


def substitute(value, variables):
    if isinstance(value, str):
        return re.sub(r"\{([A-Z_][A-Z0-9_]*)\}", lambda m: variables.get(m.group(1), m.group(0)), value)
    if isinstance(value, list):
        return [substitute(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, variables) for k, v in value.items()}
    return value


def run_command(argv, cwd):
    """Runs a plain command; returns (seconds, bytes it wrote to stdout)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd)
    size = 0
    while True:
        chunk = proc.stdout.read(1 << 16)
        if not chunk:
            break
        size += len(chunk)
    proc.wait()
    return time.perf_counter() - t0, size


def call_case(server, case):
    if "tool" in case:
        took, msg, size = server.request("tools/call", {"name": case["tool"], "arguments": case.get("arguments", {})})
    else:
        took, msg, size = server.request(case["method"], case.get("params", {}))
    return took, msg, size


def answer_text(msg):
    result = msg.get("result") or {}
    parts = [c.get("text", "") for c in result.get("content", []) if isinstance(c, dict)]
    return "\n".join(parts) if parts else json.dumps(msg)


def check(case, msg):
    if "error" in msg:
        return f"error: {msg['error'].get('message')}"
    if (msg.get("result") or {}).get("isError"):
        return "isError: " + answer_text(msg)[:200]
    wanted = case.get("expect_contains")
    if wanted:
        text = answer_text(msg)
        for w in [wanted] if isinstance(wanted, str) else wanted:
            if w not in text:
                return f"missing {w!r}"
    return None


def med(values):
    return statistics.median(values) if values else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", required=True, help="server command line (placeholders allowed)")
    ap.add_argument("--cases", required=True)
    ap.add_argument("--root", action="append", default=[], help="root directory (repeatable)")
    ap.add_argument("--var", action="append", default=[], help="NAME=VALUE placeholder")
    ap.add_argument("-k", type=int, default=5, help="timed runs per case")
    ap.add_argument("-w", type=int, default=1, help="untimed warm-up runs per case")
    ap.add_argument("--startup-runs", type=int, default=5)
    ap.add_argument("--ping-runs", type=int, default=50)
    ap.add_argument("--settle", type=float, default=0, help="seconds to wait after initialize (index build)")
    ap.add_argument("--wait-fresh", action="store_true", help="after initialize, poll list_roots until every index is fresh and the symbol index is built")
    ap.add_argument("--during-symbol-build", action="store_true",
                    help="with --wait-fresh: start as soon as the file index is fresh, while the symbol index "
                         "still builds in the background, and do not wait for the server to go quiet between "
                         "calls (it is not quiet while building; rg still runs with the server stopped)")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--only", help="regex on case names")
    ap.add_argument("--label", default="")
    ap.add_argument("--json", help="write every sample here")
    args = ap.parse_args()

    roots = [os.path.abspath(r) for r in args.root]
    variables = {"ROOT": roots[0] if roots else os.getcwd()}
    for i, r in enumerate(roots):
        variables[f"ROOT{i}"] = r
    for v in args.var:
        name, _, value = v.partition("=")
        variables[name] = value
    with open(args.cases) as f:
        cases = json.load(f)
    cases = cases["cases"] if isinstance(cases, dict) else cases
    cases = [substitute(c, variables) for c in cases]
    if args.only:
        cases = [c for c in cases if re.search(args.only, c["name"])]
    command = shlex.split(substitute(args.server, variables))

    startup = []
    for _ in range(args.startup_runs):
        s = Server(command, roots, args.timeout)
        startup.append(s.initialize()[0])
        s.close()

    server = Server(command, roots, args.timeout)
    server.initialize()
    fresh_after = None
    symbols_after = None
    if args.wait_fresh:
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < args.timeout:
            _, msg, _ = server.request("tools/call", {"name": "list_roots", "arguments": {}})
            text = answer_text(msg)
            states = re.findall(r"index: (\w+)", text)
            # Warm means every index is built: the symbol and content indexes too (they
            # build in the background after the file index and would compete with the
            # measured calls).
            symbols = re.findall(r"symbols: ([\w-]+)", text)
            symbols += re.findall(r"content: ([\w-]+)", text)
            building = any(s in ("building", "waiting", "re-syncing") for s in symbols)
            if states and all(s == "fresh" for s in states) and fresh_after is None:
                fresh_after = time.perf_counter() - t0
            if fresh_after is not None and (not building or args.during_symbol_build):
                symbols_after = time.perf_counter() - t0
                break
            time.sleep(0.05)
    if args.settle:
        time.sleep(args.settle)
    if args.during_symbol_build:
        server.waits_for_quiet = False
    server.settle()
    pings = []
    for _ in range(args.ping_runs):
        pings.append(server.request("ping")[0])

    results = []
    for case in cases:
        row = {"name": case["name"], "server": [], "command": [], "ratio": [], "server_cpu": [],
               "idle_cost": [], "response_bytes": None, "command_bytes": None, "problem": None}
        compare = case.get("compare")
        for i in range(args.w + args.k):
            server.settle(quiet=0.1)
            c0 = cpu_seconds(server.proc.pid)
            took, msg, size = call_case(server, case)
            c1 = cpu_seconds(server.proc.pid)
            problem = check(case, msg)
            if problem and not row["problem"]:
                row["problem"] = problem
            row["response_bytes"] = size
            cmd_took = None
            if compare:
                server.settle(quiet=0.1)
                os.kill(server.proc.pid, signal.SIGSTOP)
                try:
                    cmd_took, row["command_bytes"] = run_command(compare, roots[0] if roots else None)
                finally:
                    os.kill(server.proc.pid, signal.SIGCONT)
                before = cpu_seconds(server.proc.pid)
                server.settle(quiet=0.2)
                idle = cpu_seconds(server.proc.pid) - before
            if i < args.w:
                continue
            row["server"].append(took)
            row["server_cpu"].append(c1 - c0)
            if cmd_took is not None:
                row["command"].append(cmd_took)
                row["ratio"].append(took / cmd_took)
                row["idle_cost"].append(idle)
        results.append(row)

    still_building = None
    if args.during_symbol_build:
        _, msg, _ = server.request("tools/call", {"name": "list_roots", "arguments": {}})
        still_building = any(s in ("building", "waiting", "re-syncing")
                             for s in re.findall(r"symbols: ([\w-]+)", answer_text(msg)))
    rss = peak_rss_mib(server.proc.pid)
    server.close()

    label = f" — {args.label}" if args.label else ""
    print(f"## {os.path.basename(args.cases)}{label}\n")
    print(f"k = {args.k} (+{args.w} warm-up); server: `{' '.join(command)}`; roots: {', '.join(roots)}")
    if startup:
        print(f"spawn → initialize answered: median {med(startup)*1000:.1f} ms (n = {len(startup)})")
    if pings:
        print(f"ping: median {med(pings)*1000:.2f} ms (n = {len(pings)})")
    if fresh_after is not None:
        print(f"index fresh {fresh_after*1000:.0f} ms after initialize")
    if symbols_after is not None and fresh_after is not None and symbols_after > fresh_after + 0.5:
        print(f"symbol index ready {symbols_after:.1f} s after initialize")
    if still_building is not None:
        print(f"measured while the symbol index was building; still building after the last call: {'yes' if still_building else 'no'}")
    print(f"peak RSS (VmHWM): {rss:.1f} MiB\n" if rss else "")
    print("| case | rootgrep ms | command ms | ratio (median, min–max) | server CPU ms | idle cost ms | answer bytes | command bytes | check |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        ratio = (f"**{med(r['ratio']):.2f}×** ({min(r['ratio']):.2f}–{max(r['ratio']):.2f})" if r["ratio"] else "")
        cmd = f"{med(r['command'])*1000:.1f}" if r["command"] else ""
        idle = f"{med(r['idle_cost'])*1000:.0f}" if r["idle_cost"] else ""
        print(f"| {r['name']} | {med(r['server'])*1000:.1f} | {cmd} | {ratio} | "
              f"{med(r['server_cpu'])*1000:.0f} | {idle} | {r['response_bytes']:,} | "
              f"{'' if r['command_bytes'] is None else format(r['command_bytes'], ',')} | {r['problem'] or 'ok'} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"label": args.label, "server": command, "roots": roots, "k": args.k, "w": args.w,
                       "startup_s": startup, "ping_s": pings, "fresh_after_s": fresh_after,
                       "peak_rss_mib": rss, "cases": results}, f, indent=1)
    if any(r["problem"] for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
