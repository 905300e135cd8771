#!/usr/bin/env python3
"""Cancellation latency: how long after `notifications/cancelled` rootgrep's CPU goes idle.

Starts the server (`--no-watch`, so no index build competes for the CPU) on a corpus, runs a
slow `grep` with a progress token, waits for the first progress notification (the search is
then really running), sends `notifications/cancelled`, and samples the process's CPU time
(utime + stime from /proc, clock ticks of 10 ms) every 2 ms until it stops growing for 60 ms.
The latency is the time from the cancel to the last tick of CPU growth (so it is exact to one
tick, 10 ms). Also checks that no response arrives for the cancelled id.

Usage: cancel_probe.py BINARY CORPUS [--runs N] [--json OUT]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

PATTERN = r"\b\w{40,}\b|(\w+\s+){12}\d"


def cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime (fields 14, 15)


def run_once(binary: str, corpus: str) -> dict:
    proc = subprocess.Popen(
        [binary, "--no-watch", corpus],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        bufsize=1,
    )
    lines: list[dict] = []
    cond = threading.Condition()

    def reader() -> None:
        for line in proc.stdout:
            with cond:
                lines.append(json.loads(line))
                cond.notify_all()

    threading.Thread(target=reader, daemon=True).start()

    def send(msg: dict) -> None:
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()

    def wait(pred, timeout: float):
        deadline = time.monotonic() + timeout
        with cond:
            while True:
                for m in lines:
                    if pred(m):
                        return m
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                cond.wait(left)

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "cancel-probe", "version": "1"}}})
    assert wait(lambda m: m.get("id") == 1, 10), "no initialize answer"
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "grep", "arguments": {"pattern": PATTERN, "output_mode": "count"},
        "_meta": {"progressToken": "p"}}})
    first = wait(lambda m: m.get("method") == "notifications/progress" or m.get("id") == 2, 60)
    if first is None or first.get("id") == 2:
        proc.kill()
        return {"skipped": "the search finished before any progress"}
    cancelled_at = time.monotonic()
    send({"jsonrpc": "2.0", "method": "notifications/cancelled",
          "params": {"requestId": 2, "reason": "probe"}})
    last_ticks = cpu_ticks(proc.pid)
    last_growth = cancelled_at
    while time.monotonic() - last_growth < 0.06:
        time.sleep(0.002)
        ticks = cpu_ticks(proc.pid)
        if ticks != last_ticks:
            last_ticks = ticks
            last_growth = time.monotonic()
    latency_ms = (last_growth - cancelled_at) * 1000
    answered = wait(lambda m: m.get("id") == 2, 0.5) is not None
    proc.stdin.close()
    proc.wait(timeout=10)
    return {"latency_ms": round(latency_ms, 1), "response_after_cancel": answered}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("corpus")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json")
    args = parser.parse_args()
    results = [run_once(args.binary, os.path.abspath(args.corpus)) for _ in range(args.runs)]
    measured = [r["latency_ms"] for r in results if "latency_ms" in r]
    summary = {
        "runs": results,
        "median_ms": statistics.median(measured) if measured else None,
        "max_ms": max(measured) if measured else None,
        "responses_after_cancel": sum(1 for r in results if r.get("response_after_cancel")),
        "tick_ms": 1000 / os.sysconf("SC_CLK_TCK"),
    }
    print(f"cancel -> CPU idle: median {summary['median_ms']} ms, max {summary['max_ms']} ms "
          f"over {len(measured)} runs (CPU clock tick {summary['tick_ms']:.0f} ms); "
          f"responses after cancel: {summary['responses_after_cancel']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 1 if summary["responses_after_cancel"] else 0


if __name__ == "__main__":
    sys.exit(main())
