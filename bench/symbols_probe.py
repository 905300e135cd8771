#!/usr/bin/env python3
"""Symbol-index probe for rootgrep: build time and CPU, memory, warm `symbols` latency from the
index, and how soon a saved file's definitions are answered (correct, then from memory).

    python3 bench/symbols_probe.py --server 'target/release/rootgrep' \
        --root bench-corpora/nuttx --json out.json [--n 200]

One server session with two roots: --root (read-only is fine) and a scratch directory the probe
writes to (freshness is measured there: the corpus is not modified).
  1. From the roots answer, list_roots is polled every --poll ms: when the file index of --root
     is fresh, and when its `symbols` line says `ready`. CPU seconds of the server and VmRSS
     are read at both moments (RSS "before" = file index fresh, the symbol build starting).
  2. One `symbols` exact query as soon as the file index is fresh, while the symbol index is
     still building: it answers on demand (the first-query target).
  3. Warm latency once ready: each --exact and --prefix query --n times after 5 untimed;
     every sample kept (p50/p90/p99/max); the answer must say it came from the index.
  4. Freshness: a C file in the scratch root gains a new function --saves times; per save,
     the time from the write to the first correct answer and to the first answer from memory
     (stats.parsed == 0: the worker re-parsed it), polling every 2 ms.
  Load averages (/proc/loadavg) at the start and the end: the machine is shared.
"""
import argparse
import json
import os
import shlex
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import Server, proc_status_kib  # noqa: E402
from live_probe import summary  # noqa: E402


def roots_of(resp):
    return (((resp or {}).get("result") or {}).get("structuredContent") or {}).get("roots") or []


def structured(resp):
    return ((resp or {}).get("result") or {}).get("structuredContent") or {}


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[:3]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--poll", type=float, default=200, help="list_roots poll interval, ms")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds to wait for ready")
    ap.add_argument("--saves", type=int, default=10)
    ap.add_argument("--exact", action="append", default=None)
    ap.add_argument("--prefix", action="append", default=None)
    args = ap.parse_args()
    exact = args.exact or ["nxsem_wait", "up_putc", "sched_lock", "kmm_malloc", "main"]
    prefix = args.prefix or ["nxsem_", "up_", "sched_", "kmm_"]

    root = os.path.abspath(args.root)
    scratch = tempfile.mkdtemp(prefix="symprobe-")
    with open(os.path.join(scratch, "probe.c"), "w") as f:
        f.write("int probe_base(void) { return 0; }\n")
    out = {"server": shlex.split(args.server), "root": root, "scratch": scratch,
           "loadavg_start": loadavg()}
    srv = Server(shlex.split(args.server), [root, scratch], args.timeout)
    srv.initialize()
    t_roots = srv.roots_asked_at()
    pid = srv.proc.pid
    fresh_at = ready_at = None
    first_query = None
    states = []
    last = None
    while time.perf_counter() - t_roots < args.timeout:
        _, resp, _ = srv.request("tools/call", {"name": "list_roots", "arguments": {}})
        t = time.perf_counter()
        r = roots_of(resp)
        mine = next((x for x in r if x.get("path") == root), {})
        scratch_ready = any(x.get("path") != root and (x.get("symbols") or "").startswith("ready") for x in r)
        st = (mine.get("index"), mine.get("symbols"))
        if st[1] != (last or (None, None))[1] and not (st[1] or "").startswith("building ("):
            states.append({"at_s": t - t_roots, "index": st[0], "symbols": st[1]})
        last = st
        if fresh_at is None and (st[0] or "").startswith("fresh"):
            fresh_at = t
            out["roots_to_file_index_fresh_s"] = t - t_roots
            out["cpu_s_at_file_index_fresh"] = srv.cpu_s()
            out["rss_at_file_index_fresh_kib"] = proc_status_kib(pid, "VmRSS")
            q0 = time.perf_counter()
            _, qr, _ = srv.request("tools/call", {"name": "symbols", "arguments": {"query": exact[0], "exact": True}})
            s = structured(qr)
            first_query = {"ms": (time.perf_counter() - q0) * 1000, "total": s.get("total"),
                           "from_index": "indexed_files" in (s.get("stats") or {}),
                           "stats": s.get("stats")}
        if (st[1] or "").startswith("ready") and scratch_ready:
            ready_at = t
            break
        time.sleep(args.poll / 1000)
    out["states_seen"] = states
    out["first_query_while_building"] = first_query
    if ready_at is None:
        print(f"symbol index not ready after {args.timeout}s: {last}", file=sys.stderr)
    out["roots_to_symbols_ready_s"] = None if ready_at is None else ready_at - t_roots
    out["file_fresh_to_symbols_ready_s"] = None if (ready_at is None or fresh_at is None) else ready_at - fresh_at
    out["cpu_s_at_symbols_ready"] = srv.cpu_s()
    out["symbols_build_cpu_s"] = out["cpu_s_at_symbols_ready"] - out.get("cpu_s_at_file_index_fresh", 0)
    out["rss_at_symbols_ready_kib"] = proc_status_kib(pid, "VmRSS")
    out["ready_line"] = last[1] if last else None
    time.sleep(1.0)
    out["rss_idle_with_symbols_kib"] = proc_status_kib(pid, "VmRSS")
    out["hwm_kib"] = proc_status_kib(pid, "VmHWM")

    # 3. warm latency
    warm = []
    for kind, queries in (("exact", exact), ("prefix", prefix)):
        for q in queries:
            params = {"name": "symbols", "arguments": {"query": q, "exact": kind == "exact", "path": root}}
            xs, s = [], {}
            for i in range(5 + args.n):
                dt, resp, _ = srv.request("tools/call", params)
                if i >= 5:
                    xs.append(dt * 1000)
                s = structured(resp)
            warm.append({"kind": kind, "query": q, "total": s.get("total"),
                         "from_index": "indexed_files" in (s.get("stats") or {}),
                         "ms": summary(xs), "samples_ms": xs})
    out["warm"] = warm

    # 4. freshness after a save
    saves = []
    path = os.path.join(scratch, "probe.c")
    for k in range(args.saves):
        name = f"probe_saved_{k}_{os.getpid()}"
        with open(path, "w") as f:
            f.write(f"int probe_base(void) {{ return 0; }}\nint {name}(void) {{ return {k}; }}\n")
        t_write = time.perf_counter()
        correct = memory = None
        while time.perf_counter() - t_write < 10 and memory is None:
            _, resp, _ = srv.request("tools/call", {"name": "symbols", "arguments": {"query": name, "exact": True, "path": scratch}})
            s = structured(resp)
            t = time.perf_counter()
            if s.get("total") == 1:
                if correct is None:
                    correct = (t - t_write) * 1000
                st = s.get("stats") or {}
                if "indexed_files" in st and st.get("parsed") == 0:
                    memory = (t - t_write) * 1000
            time.sleep(0.002)
        saves.append({"correct_ms": correct, "from_memory_ms": memory})
        time.sleep(0.3)
    out["saves"] = saves
    out["loadavg_end"] = loadavg()
    _, resp, _ = srv.request("tools/call", {"name": "list_roots", "arguments": {}})
    out["final_roots"] = [(x.get("path"), x.get("index"), x.get("symbols")) for x in roots_of(resp)]
    srv.close()
    with open(args.json, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)

    f = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
    kib = lambda x: "-" if x is None else f"{x / 1024:.1f} MiB"  # noqa: E731
    print(f"load average start {out['loadavg_start']} end {out['loadavg_end']}")
    print(f"file index fresh after {f(out.get('roots_to_file_index_fresh_s'))} s; symbols ready "
          f"{f(out['file_fresh_to_symbols_ready_s'])} s later; build CPU {f(out['symbols_build_cpu_s'])} s")
    print(f"ready: {out['ready_line']}")
    print(f"VmRSS at file index fresh {kib(out.get('rss_at_file_index_fresh_kib'))}, symbols ready "
          f"{kib(out['rss_at_symbols_ready_kib'])}, idle {kib(out['rss_idle_with_symbols_kib'])}, HWM {kib(out['hwm_kib'])}")
    if first_query:
        print(f"first query while building: {first_query['ms']:.1f} ms, total {first_query['total']}, "
              f"from index {first_query['from_index']}")
    for w in warm:
        m = w["ms"] or {}
        print(f"warm {w['kind']} {w['query']!r}: {w['total']} defs, index {w['from_index']}: "
              f"p50 {f(m.get('p50'))} p90 {f(m.get('p90'))} p99 {f(m.get('p99'))} max {f(m.get('max'))} ms")
    for i, s in enumerate(saves):
        print(f"save {i}: correct after {f(s['correct_ms'])} ms, from memory after {f(s['from_memory_ms'])} ms")


if __name__ == "__main__":
    main()
