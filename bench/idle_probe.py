#!/usr/bin/env python3
"""What an idle rootgrep costs the other programs reading its roots.

Starts the server on ROOT (watcher on, as hosts run it), waits until `list_roots` says the
index is fresh (and the symbol index built) and the server's CPU is quiet, then runs a reader (`rg -l error ROOT` by
default) N times beside it, and reports the server CPU those reads cost and the reader's wall
time; then stops the server and times the same reader N times alone.

    python3 bench/idle_probe.py --server target/release/rootgrep --root bench-corpora/nuttx
"""
import argparse
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import Server, answer_text, cpu_seconds, run_command  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--n", type=int, default=5)
    ap.add_argument("--reader", default="rg -l error {ROOT}")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    reader = args.reader.replace("{ROOT}", root).split()
    server = Server(args.server.split() + [root], [root], 300)
    server.initialize()
    t0 = time.time()
    while time.time() - t0 < 300:
        text = answer_text(server.request("tools/call", {"name": "list_roots", "arguments": {}})[1])
        # Idle means every index is built, the symbol index (built after the file index) too.
        building = any(s in ("building", "waiting", "re-syncing")
                       for s in re.findall(r"symbols: ([\w-]+)", text))
        if "index: fresh" in text and not building:
            break
        time.sleep(0.05)
    server.settle(quiet=0.5)
    before = cpu_seconds(server.proc.pid)
    beside = [run_command(reader, root)[0] for _ in range(args.n)]
    server.settle(quiet=0.5)
    cost = cpu_seconds(server.proc.pid) - before
    server.close()
    alone = [run_command(reader, root)[0] for _ in range(args.n)]
    print(f"reader: {' '.join(reader)} x {args.n}")
    print(f"server CPU while the reader ran {args.n}x: {cost * 1000:.0f} ms")
    print(f"reader wall time beside an idle server: median {statistics.median(beside) * 1000:.0f} ms; "
          f"alone: median {statistics.median(alone) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
