#!/usr/bin/env python3
"""Small calls: what an agent's everyday requests cost, back to back on a warm server.

    python3 bench/small_calls.py --server target/release/rootgrep --root bench-corpora/nuttx \
        [--file sched/semaphore/sem_wait.c --dir sched/semaphore --name nxsem_wait] [-k 30]

Waits until the file, symbol and search indexes are ready, then times each call k times
(20 ms apart, as an agent's calls are) and prints the median and the answer's bytes:
read_file, outline, symbols, list_directory, glob and grep in a small directory, grep in one
file, search, and ping (the floor: the JSON-RPC round trip through this client). The defaults
name apache/nuttx paths.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import Server  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--file", default="sched/semaphore/sem_wait.c")
    ap.add_argument("--dir", default="sched/semaphore")
    ap.add_argument("--name", default="nxsem_wait")
    ap.add_argument("--query", default="virtio device features are not written back")
    ap.add_argument("-k", type=int, default=30)
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    path = os.path.join(root, args.file)
    small = os.path.join(root, args.dir)
    server = Server(args.server.split(), [root], 600)
    server.initialize()
    deadline = time.time() + 600
    while time.time() < deadline:
        _, msg, _ = server.request("tools/call", {"name": "list_roots", "arguments": {}})
        text = json.dumps(msg)
        if "fresh" in text and "search: ready" in text:
            break
        time.sleep(0.2)
    time.sleep(1)
    calls = [
        ("read_file", "read_file", {"path": path, "repeat": True}),
        ("outline", "outline", {"path": path}),
        ("symbols (exact)", "symbols", {"name": args.name}),
        ("list_directory", "list_directory", {"path": small}),
        ("glob, small directory", "glob", {"pattern": "*.c", "path": small}),
        ("grep, small directory", "grep", {"pattern": args.name, "path": small}),
        ("grep, one file", "grep", {"pattern": args.name, "path": path}),
        ("search", "search", {"query": args.query}),
        ("ping", None, None),
    ]
    print(f"| call | median ms | bytes |\n|---|---|---|")
    for label, tool, arguments in calls:
        times = []
        for _ in range(args.k):
            time.sleep(0.02)
            if tool is None:
                took, msg, size = server.request("ping", {})
            else:
                took, msg, size = server.request(
                    "tools/call", {"name": tool, "arguments": arguments})
            times.append(took)
        times.sort()
        failed = "error" in msg or (msg.get("result") or {}).get("isError")
        note = " (error)" if failed else ""
        print(f"| {label}{note} | {times[len(times) // 2] * 1000:.2f} | {size:,} |")
    server.close()


if __name__ == "__main__":
    main()
