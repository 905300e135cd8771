#!/usr/bin/env python3
"""A first start (or a restart) sampled over time: memory, CPU, and when each index is ready.

    python3 bench/first_start_memory.py --server target/profiling/rootgrep \
        --root TREE --cache-dir DIR --out samples.txt

Run it from an empty directory (a server indexes its working directory first, as its
fallback root). An empty --cache-dir makes it a first start. Every 2 s a line
`seconds VmHWM RssAnon RssFile cpu_seconds` (MiB; seconds from the server's roots/list
request) is written to --out; when an index turns ready (the file index fresh; content,
symbols, search ready) a `# NAME ready {...}` line records the moment, the server's CPU
seconds, its own memory (RssAnon) and its peak (VmHWM). Ends when every index is ready.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import Server, proc_status_kib  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--cache-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=float, default=7200)
    args = ap.parse_args()
    srv = Server([args.server, "--cache-dir", args.cache_dir], [args.root], args.timeout)
    srv.initialize()
    t_roots = srv.roots_asked_at()
    pid = srv.proc.pid
    mib = lambda key: proc_status_kib(pid, key) // 1024  # noqa: E731
    ready, last = {}, -2.0
    with open(args.out, "w") as out:
        while len(ready) < 4:
            mine = srv.root_status()
            at = time.perf_counter() - t_roots
            for key in ("index", "content", "symbols", "search"):
                if key not in ready and (mine.get(key) or "").startswith(("fresh", "ready")):
                    ready[key] = {"t": round(at, 1), "cpu": round(srv.cpu_s(), 1),
                                  "anon": mib("RssAnon"), "hwm": mib("VmHWM")}
                    out.write(f"# {key} ready {json.dumps(ready[key])}\n")
            if at - last >= 2:
                last = at
                out.write(f"{at:.0f} {mib('VmHWM')} {mib('RssAnon')} {mib('RssFile')} "
                          f"{srv.cpu_s():.0f}\n")
            out.flush()
            time.sleep(0.5)
        out.write("# done " + json.dumps(ready) + "\n")
    srv.close()
    print(json.dumps(ready))


if __name__ == "__main__":
    main()
