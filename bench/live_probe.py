#!/usr/bin/env python3
"""Live-index probe for rootgrep: time to a fresh index, RSS with the index, completion and
resources/list latency with every sample kept (p50/p90/p99/max, which driver.py does not give).

    python3 bench/live_probe.py --server 'target/release/rootgrep' --root bench-corpora/large \
        --json out.json [--n 1000] [--complete 'VALUE' ...]

One server session (the MCP client is driver.py's Server, so the handshake and the roots
exchange are the same as in the other runs):
  1. initialize; the server asks roots/list and gets --root; from the moment the roots answer is
     sent, `list_roots` is polled every --poll ms until every root reports `index: "fresh (N files)"`.
     Reported: roots answered -> fresh (ms, resolution = poll interval + one list_roots call),
     the index states seen on the way, the file count.
  2. RSS once fresh (VmRSS and VmHWM of the server process), then again after the requests below.
  3. `resources/list` first page, --n-list times (after 3 untimed), every sample kept.
  4. `completion/complete` for the file:///{+path} template, each --complete value --n times
     (after 20 untimed), every sample kept; the number of values returned is recorded.
     Values may use {ROOTREL}: the first root without its leading slash.
Latency is request written -> response line read by the client (includes JSON parsing on the
client's reader thread, like every driver.py figure).
"""
import argparse
import json
import os
import shlex
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import Server, proc_status_kib  # noqa: E402


def pct(xs, p):
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    s = sorted(xs)
    k = max(1, -(-len(s) * p // 100))  # ceil(n*p/100), at least 1
    return s[int(k) - 1]


def summary(xs):
    if not xs:
        return None
    return {"n": len(xs), "p50": pct(xs, 50), "p90": pct(xs, 90), "p99": pct(xs, 99),
            "max": max(xs), "min": min(xs), "mean": statistics.fmean(xs)}


def index_states(resp):
    roots = (((resp or {}).get("result") or {}).get("structuredContent") or {}).get("roots") or []
    return [(r.get("path"), r.get("watch"), r.get("index")) for r in roots]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--n", type=int, default=1000, help="timed completion requests per value")
    ap.add_argument("--n-list", type=int, default=50, help="timed resources/list requests")
    ap.add_argument("--poll", type=float, default=10, help="list_roots poll interval, ms")
    ap.add_argument("--fresh-timeout", type=float, default=600, help="seconds to wait for fresh")
    ap.add_argument("--complete", action="append", default=[], help="completion argument value")
    args = ap.parse_args()

    root = os.path.abspath(args.root)
    rootrel = root.lstrip("/")
    srv = Server(shlex.split(args.server), [root], args.fresh_timeout)
    out = {"server": shlex.split(args.server), "root": root, "poll_ms": args.poll}
    out["startup_ms"] = srv.initialize()[0] * 1000

    # 1. roots answered -> fresh
    t_roots = srv.roots_asked_at()
    out["roots_requested_after_initialized_ms"] = (t_roots - srv.t_init) * 1000
    seen, fresh_at, polls, last = [], None, 0, None
    while time.perf_counter() - t_roots < args.fresh_timeout:
        _, resp, _ = srv.request("tools/call", {"name": "list_roots", "arguments": {}})
        t = time.perf_counter()
        polls += 1
        st = index_states(resp)
        if st != last:
            seen.append({"at_ms": (t - t_roots) * 1000, "states": st})
            last = st
        if st and all((idx or "").startswith("fresh") for _, _, idx in st):
            fresh_at = t
            break
        time.sleep(args.poll / 1000)
    out["index_states_seen"] = seen
    out["list_roots_polls"] = polls
    out["roots_to_fresh_ms"] = None if fresh_at is None else (fresh_at - t_roots) * 1000
    out["fresh_state"] = last
    pid = srv.proc.pid
    out["rss_when_fresh_kib"] = proc_status_kib(pid, "VmRSS")
    out["hwm_when_fresh_kib"] = proc_status_kib(pid, "VmHWM")
    out["cpu_s_to_fresh"] = srv.cpu_s()
    if fresh_at is None:
        print(f"index not fresh after {args.fresh_timeout}s: {last}", file=sys.stderr)

    # 2. settle a moment, RSS at rest with the index
    time.sleep(1.0)
    out["rss_idle_with_index_kib"] = proc_status_kib(pid, "VmRSS")

    # 3. resources/list first page
    lst, nres = [], None
    for i in range(3 + args.n_list):
        dt, resp, nb = srv.request("resources/list", {})
        if i >= 3:
            lst.append(dt * 1000)
        nres = len(((resp or {}).get("result") or {}).get("resources") or [])
        out["resources_list_first_uri"] = (((resp or {}).get("result") or {}).get("resources") or [{}])[0].get("uri")
        out["resources_list_has_cursor"] = bool(((resp or {}).get("result") or {}).get("nextCursor"))
    out["resources_list_ms"] = summary(lst)
    out["resources_list_items"] = nres
    out["resources_list_samples_ms"] = lst

    # 4. completion
    comps = []
    for raw in args.complete:
        value = raw.replace("{ROOTREL}", rootrel)
        params = {"ref": {"type": "ref/resource", "uri": "file:///{+path}"},
                  "argument": {"name": "path", "value": value}}
        xs, nvals, total, err = [], None, None, None
        for i in range(20 + args.n):
            dt, resp, nb = srv.request("completion/complete", params)
            if resp is None or "error" in resp:
                err = (resp or {}).get("error", "timeout")
                break
            if i >= 20:
                xs.append(dt * 1000)
            c = resp["result"].get("completion", {})
            nvals, total = len(c.get("values", [])), c.get("total")
            first = c.get("values", [])[:3]
        comps.append({"value": raw, "values_returned": nvals, "total": total, "first_values": first if not err else None,
                      "error": err, "ms": summary(xs), "samples_ms": xs})
    out["completion"] = comps
    out["rss_after_kib"] = proc_status_kib(pid, "VmRSS")
    out["peak_rss_kib"] = proc_status_kib(pid, "VmHWM")
    _, resp, _ = srv.request("tools/call", {"name": "list_roots", "arguments": {}})
    out["final_state"] = index_states(resp)
    srv.close()
    with open(args.json, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)

    f = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
    print(f"roots asked {f(out['roots_requested_after_initialized_ms'])} ms after initialized; "
          f"roots answered -> fresh: {f(out['roots_to_fresh_ms'])} ms ({polls} polls); state {last}")
    print(f"RSS when fresh {out['rss_when_fresh_kib'] / 1024:.1f} MiB (HWM {out['hwm_when_fresh_kib'] / 1024:.1f}); "
          f"idle with index {out['rss_idle_with_index_kib'] / 1024:.1f} MiB; after requests "
          f"{out['rss_after_kib'] / 1024:.1f} MiB, peak {out['peak_rss_kib'] / 1024:.1f} MiB")
    r = out["resources_list_ms"]
    if r:
        print(f"resources/list first page ({nres} items): p50 {f(r['p50'])} p99 {f(r['p99'])} max {f(r['max'])} ms")
    for c in comps:
        m = c["ms"] or {}
        print(f"complete {c['value']!r}: {c['values_returned']} values (total {c['total']}) "
              f"p50 {f(m.get('p50'))} p90 {f(m.get('p90'))} p99 {f(m.get('p99'))} max {f(m.get('max'))} ms"
              f"{'  ERROR ' + str(c['error']) if c['error'] else ''}")


if __name__ == "__main__":
    main()
