#!/usr/bin/env python3
"""When each index of a restarted server is ready, and what memory it holds then and later.

    python3 bench/restart_moments.py --server target/profiling/rootgrep \
        --root TREE --cache-dir DIR [--calls]

Starts the server on ROOT with the given cache (a stored entry: a restart), and polls
`list_roots` every 5 ms from the server's `roots/list` request until the file index is
fresh and the content, symbol and search indexes are ready; prints those moments (seconds),
the server's CPU seconds and own memory (RssAnon, MiB) when all are, and its VmHWM. With
--calls, then six agent-style calls (`grep` ×3, `search`, `symbols`, `glob`), the own
memory 2 s after each, and after 10 s of idle. Start it from a directory outside any large tree: the
server indexes its working directory first, as a fallback root, until the roots arrive.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import Server, proc_status_kib  # noqa: E402

CALLS = [
    ("grep", {"pattern": "zqxjkv_rare_needle"}),
    ("grep", {"pattern": "deprecated_api_call", "head_limit": 20}),
    ("search", {"query": "parse config file error handling"}),
    ("symbols", {"query": "main"}),
    ("glob", {"pattern": "**/*.rs", "head_limit": 50}),
    ("grep", {"pattern": "fn\\s+\\w+_handler", "head_limit": 20}),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--cache-dir", required=True)
    ap.add_argument("--calls", action="store_true")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()
    srv = Server([args.server, "--cache-dir", args.cache_dir], [args.root], args.timeout)
    srv.initialize()
    t_roots = srv.roots_asked_at(limit=args.timeout)
    out = {}
    while time.perf_counter() - t_roots < args.timeout:
        mine = srv.root_status()
        at = round(time.perf_counter() - t_roots, 3)
        for key in ("index", "content", "symbols", "search"):
            line = mine.get(key) or ""
            if key not in out and line.startswith(("fresh", "ready")):
                out[key] = at
        if len(out) == 4:
            break
        time.sleep(0.005)
    pid = srv.proc.pid
    out["cpu_s"] = round(srv.cpu_s(), 2)
    out["own_mib"] = proc_status_kib(pid, "RssAnon") // 1024
    out["hwm_mib"] = proc_status_kib(pid, "VmHWM") // 1024
    if args.calls:
        out["own_mib_2s_after_each"] = []
        for name, arguments in CALLS:
            srv.request("tools/call", {"name": name, "arguments": arguments})
            time.sleep(2)
            out["own_mib_2s_after_each"].append(proc_status_kib(pid, "RssAnon") // 1024)
        time.sleep(10)
        out["own_mib_after_calls"] = proc_status_kib(pid, "RssAnon") // 1024
    srv.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
