#!/usr/bin/env python3
"""Churn probe for rootgrep's live layer: server CPU (not wall time: the machine may be
shared) spent keeping the index fresh while another process creates many files.

    python3 bench/churn_probe.py --server 'target/release/rootgrep' [--files 25000]
        [--per-dir 100] [--seed 2000] [--json out.json]

For each case, a fresh server over a fresh temp tree (`--seed` files, a `.ignore` naming
`target/`), run until its index is fresh and its CPU quiet; then this process creates
`--files` files (`--per-dir` to a directory) as fast as it can, and waits until the server
is quiet again with a fresh index holding them all. Reported per case: the server's CPU
seconds (utime+stime from /proc/PID/stat) from the first write to quiet, per file in µs,
this process's own CPU seconds while writing (a slow server slows the writer too), and the
index line of `list_roots` at the end (full builds and incremental updates, on servers that
report them).

Cases: `create` (new directories under the root), `ignored` (the same into `target/`,
which the index must not hold).
"""
import argparse
import json
import os
import re
import shlex
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import Server, answer_text  # noqa: E402


def index_line(server):
    _, msg, _ = server.request("tools/call", {"name": "list_roots", "arguments": {}})
    roots = ((msg.get("result") or {}).get("structuredContent") or {}).get("roots") or []
    if roots:
        return roots[0].get("index", "")
    found = re.search(r"index: ([^\n]*)", answer_text(msg))
    return found.group(1) if found else ""


def files_of(line):
    found = re.match(r"fresh \((\d+) files", line)
    return int(found.group(1)) if found else None


def wait_files(server, want, timeout):
    end = time.monotonic() + timeout
    line = ""
    while time.monotonic() < end:
        line = index_line(server)
        if files_of(line) == want:
            return line
        time.sleep(0.1)
    raise TimeoutError(f"index never held {want} files: {line}")


def run_case(command, case, files, per_dir, seed, timeout):
    with tempfile.TemporaryDirectory(prefix="rootgrep-churn-") as tmp:
        root = os.path.realpath(tmp)
        with open(os.path.join(root, ".ignore"), "w") as f:
            f.write("target/\n")
        for n in range(seed):
            d = os.path.join(root, "seed", f"d{n // 100:03}")
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, f"s{n:05}.txt"), "w") as f:
                f.write(f"seed {n}\n")
        server = Server(command, [root], timeout)
        try:
            server.initialize()
            wait_files(server, seed, timeout)
            server.settle(quiet=0.5, limit=30)
            base = "target" if case == "ignored" else "gen"
            cpu0 = server.cpu_s()
            me0 = os.times()
            t0 = time.monotonic()
            for n in range(files):
                d = os.path.join(root, base, f"d{n // per_dir:04}")
                if n % per_dir == 0:
                    os.makedirs(d, exist_ok=True)
                with open(os.path.join(d, f"f{n:06}.txt"), "w") as f:
                    f.write(f"churn {n}\n")
            me1 = os.times()
            wrote_s = time.monotonic() - t0
            want = seed if case == "ignored" else seed + files
            # Everything must have reached the server before "quiet" means anything.
            time.sleep(1.5)
            wait_files(server, want, timeout)
            server.settle(quiet=1.0, limit=120)
            line = wait_files(server, want, timeout)
            cpu = server.cpu_s() - cpu0
            return {
                "case": case,
                "files": files,
                "per_dir": per_dir,
                "seed": seed,
                "server_cpu_s": round(cpu, 3),
                "server_cpu_us_per_file": round(cpu / files * 1e6, 1),
                "writer_cpu_s": round((me1.user - me0.user) + (me1.system - me0.system), 3),
                "writer_wall_s": round(wrote_s, 3),
                "index": line,
            }
        finally:
            server.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", required=True)
    ap.add_argument("--files", type=int, default=25000)
    ap.add_argument("--per-dir", type=int, default=100)
    ap.add_argument("--seed", type=int, default=2000)
    ap.add_argument("--cases", default="create,ignored")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--json")
    args = ap.parse_args()
    command = shlex.split(args.server)
    results = []
    for _ in range(args.runs):
        for case in args.cases.split(","):
            result = run_case(command, case, args.files, args.per_dir, args.seed, args.timeout)
            print(json.dumps(result), flush=True)
            results.append(result)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
