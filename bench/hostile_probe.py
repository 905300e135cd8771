#!/usr/bin/env python3
"""Hostile search shapes: time and peak memory of one rootgrep server per case.

    bench/hostile_probe.py BIN [BIN ...]

For each binary and case: a fresh server (--no-watch) over a generated tree in a temp dir,
one tools/call timed from request to response, then the server's VmHWM (peak RSS) from
/proc. Cases: 100,000 matching lines with -A 1000000 and with -C 1000000000 (context that
used to be copied into every kept match, or allocated up front), and 20,000 matches in one
file rendered in full (content mode, head_limit 0, 4 MB budget; rendering used to be
quadratic in matches per file). `rg -n` on the same file is timed for reference.
"""

import json
import os
import subprocess
import sys
import tempfile
import time


def vm(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def run_case(binary, root, arguments, extra):
    proc = subprocess.Popen(
        [binary, "--no-watch", *extra],
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )

    def send(msg):
        proc.stdin.write((json.dumps(msg) + "\n").encode())
        proc.stdin.flush()

    def wait(id_):
        while True:
            line = proc.stdout.readline()
            if not line:
                return None
            msg = json.loads(line)
            if msg.get("id") == id_ and "method" not in msg:
                return msg

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                     "clientInfo": {"name": "probe", "version": "1"}}})
    wait(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}})
    started = time.perf_counter()
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "grep", "arguments": arguments}})
    answer = wait(2)
    elapsed = time.perf_counter() - started
    hwm = vm(proc.pid, "VmHWM") if proc.poll() is None else -1
    proc.kill()
    proc.wait()
    if answer is None:
        return elapsed, hwm, "no answer (server died)", 0
    result = answer.get("result", {})
    size = len(json.dumps(result))
    shown = len((result.get("structuredContent") or {}).get("matches") or [])
    return elapsed, hwm, f"{shown} matches shown", size


def main():
    binaries = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        many = os.path.join(tmp, "many")
        os.makedirs(many)
        with open(os.path.join(many, "many.txt"), "w") as f:
            f.writelines(f"x {i}\n" for i in range(1, 100_001))
        one = os.path.join(tmp, "one")
        os.makedirs(one)
        with open(os.path.join(one, "one.txt"), "w") as f:
            f.writelines(f"x {i} struct line\n" for i in range(1, 20_001))
        cases = [
            ("-A 1000000, 100k matching lines", many,
             {"pattern": "x", "output_mode": "content", "-A": 1_000_000}, []),
            ("-C 1000000000, 100k matching lines", many,
             {"pattern": "x", "output_mode": "content", "-C": 1_000_000_000}, []),
            ("20k matches in one file, full output", one,
             {"pattern": "x", "output_mode": "content", "head_limit": 0},
             ["--max-output-bytes", "4000000"]),
        ]
        for name, root, args, extra in cases:
            for binary in binaries:
                elapsed, hwm, what, size = run_case(binary, root, args, extra)
                print(f"{name:40} {binary:40} {elapsed*1000:9.1f} ms  "
                      f"VmHWM {hwm/1024:7.1f} MiB  {what}, {size} bytes")
        started = time.perf_counter()
        subprocess.run(["rg", "-n", "x", os.path.join(one, "one.txt")],
                       stdout=subprocess.DEVNULL, check=False)
        print(f"rg -n on the 20k-match file: {(time.perf_counter()-started)*1000:.1f} ms")


if __name__ == "__main__":
    main()
