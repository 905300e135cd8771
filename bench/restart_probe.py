#!/usr/bin/env python3
"""Restart probe for rootgrep's persistent indexes (PRODUCT §15): what a second start costs.

    python3 bench/restart_probe.py --server target/release/rootgrep \
        --root bench-corpora/nuttx --cache-dir target/rg-cache --json out.json [--restarts 3]

Run 0 starts with an empty --cache-dir (a first start: the full build, then the table is
stored). Each restart then starts a new server on the same root and measures, from the
server's roots/list request: the file index fresh, the symbol index ready (list_roots polled
every --poll ms), the server's CPU seconds and VmRSS at that moment, then the first `symbols`
queries on it (exact and prefix, each a first call), and one exact query sent at once after
the roots answer (--at-once: the exact or the prefix query; before the restart's check ends it
waits for it, at most 20 s, then parses on demand). Then the search index: ready, the
server's own memory (RssAnon) apart from the mapped store files (RssFile), and a first
`search` (--search). Disk: the cache directory's bytes, and the bytes of the files the
symbol index holds (supported languages, ≤ 1 MiB).
"""
import argparse
import json
import os
import shlex
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import Server, proc_status_kib  # noqa: E402

EXTS = {".c", ".h", ".rs", ".py", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".java",
        ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"}


def structured(resp):
    return ((resp or {}).get("result") or {}).get("structuredContent") or {}


def du(path):
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


def source_bytes(root):
    total = 0
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for f in files:
            if os.path.splitext(f)[1] in EXTS:
                try:
                    size = os.lstat(os.path.join(dirpath, f)).st_size
                except OSError:
                    continue
                if size <= 1 << 20:
                    total += size
    return total


def note_content(out, srv, mine, at):
    """The content index (grep's) ready: when, and the server's CPU then."""
    if "content_ready_s" not in out and (mine.get("content") or "").startswith("ready"):
        out["content_ready_s"] = at
        out["cpu_s_at_content_ready"] = srv.cpu_s()


def one_start(args, root, early_query):
    command = shlex.split(args.server) + ["--cache-dir", args.cache_dir]
    srv = Server(command, [root], args.timeout)
    srv.initialize()
    t_roots = srv.roots_asked_at()
    out = {}
    if early_query:
        q0 = time.perf_counter()
        query, exact = (args.exact, True) if args.at_once == "exact" else (args.prefix, False)
        _, qr, _ = srv.request("tools/call", {"name": "symbols", "arguments": {"query": query, "exact": exact}})
        s = structured(qr)
        out["query_at_once"] = {"query": query, "exact": exact,
                                "sent_after_roots_s": q0 - t_roots, "ms": (time.perf_counter() - q0) * 1000,
                                "total": s.get("total"), "from_index": "indexed_files" in (s.get("stats") or {})}
    fresh_at = ready_at = None
    line = None
    while time.perf_counter() - t_roots < args.timeout:
        _, resp, _ = srv.request("tools/call", {"name": "list_roots", "arguments": {}})
        t = time.perf_counter()
        mine = next(iter(structured(resp).get("roots") or []), {})
        if fresh_at is None and (mine.get("index") or "").startswith("fresh"):
            fresh_at = t
            out["file_index_fresh_s"] = t - t_roots
            out["cpu_s_at_file_index_fresh"] = srv.cpu_s()
        note_content(out, srv, mine, t - t_roots)
        line = mine.get("symbols")
        if (line or "").startswith("ready"):
            ready_at = t
            break
        time.sleep(args.poll / 1000)
    out["symbols_ready_s"] = None if ready_at is None else ready_at - t_roots
    out["cpu_s_at_symbols_ready"] = srv.cpu_s()
    out["rss_at_symbols_ready_kib"] = proc_status_kib(srv.proc.pid, "VmRSS")
    out["symbols_line"] = line
    # The search index (ranked search) after it: ready, and what memory the server holds
    # then, its own (anonymous) apart from the mapped store files (page cache).
    while time.perf_counter() - t_roots < args.timeout:
        _, resp, _ = srv.request("tools/call", {"name": "list_roots", "arguments": {}})
        mine = next(iter(structured(resp).get("roots") or []), {})
        note_content(out, srv, mine, time.perf_counter() - t_roots)
        if (mine.get("search") or "").startswith("ready"):
            out["search_ready_s"] = time.perf_counter() - t_roots
            out["search_line"] = mine.get("search")
            break
        time.sleep(args.poll / 1000)
    out["cpu_s_at_search_ready"] = srv.cpu_s()
    for key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
        out[f"{key}_at_search_ready_kib"] = proc_status_kib(srv.proc.pid, key)
    dt, resp, size = srv.request("tools/call", {"name": "search", "arguments": {"query": args.search}})
    out["first_search"] = {"query": args.search, "ms": dt * 1000, "bytes": size,
                           "partial": structured(resp).get("partial")}
    first = []
    for query, exact in ((args.exact, True), (args.prefix, False)):
        dt, resp, size = srv.request("tools/call", {"name": "symbols", "arguments": {"query": query, "exact": exact}})
        s = structured(resp)
        first.append({"query": query, "exact": exact, "ms": dt * 1000, "total": s.get("total"),
                      "from_index": "indexed_files" in (s.get("stats") or {}), "bytes": size})
    out["first_queries"] = first
    # Let the writer store what it built (run 0) before the server goes.
    deadline = time.perf_counter() + 120
    while time.perf_counter() < deadline:
        _, resp, _ = srv.request("tools/call", {"name": "list_roots", "arguments": {}})
        mine = next(iter(structured(resp).get("roots") or []), {})
        line = mine.get("symbols") or ""
        search = mine.get("search") or ""
        content = mine.get("content") or ""
        settled = lambda l: "stored" in l or "loaded" in l or "not stored" in l or "read from" in l
        if settled(line) and settled(search) and settled(content):
            out["content_line"] = content
            break
        time.sleep(0.2)
    out["final_symbols_line"] = line
    out["cpu_s_total"] = srv.cpu_s()
    out["VmHWM_total_kib"] = proc_status_kib(srv.proc.pid, "VmHWM")
    srv.close()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--cache-dir", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--restarts", type=int, default=3)
    ap.add_argument("--poll", type=float, default=20, help="list_roots poll interval, ms")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--exact", default="nxsem_wait")
    ap.add_argument("--prefix", default="up_")
    ap.add_argument("--search", default="virtio device features are not written back",
                    help="the search query asked once the search index is ready")
    ap.add_argument("--keep", action="store_true", help="do not empty --cache-dir first")
    ap.add_argument("--at-once", choices=["exact", "prefix"], default="exact",
                    help="the query the last restart sends at once after the roots answer")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    if not args.keep:
        shutil.rmtree(args.cache_dir, ignore_errors=True)
    runs = []
    for n in range(args.restarts + 1):
        run = one_start(args, root, early_query=n > 0 and n == args.restarts)
        run["cache_bytes"] = du(args.cache_dir)
        runs.append(run)
        print(json.dumps({"run": n, **{k: v for k, v in run.items() if k != "first_queries"}}), file=sys.stderr)
        for q in run["first_queries"]:
            print("   ", json.dumps(q), file=sys.stderr)
    text = source_bytes(root)
    out = {"server": args.server, "root": root, "runs": runs, "source_bytes": text,
           "store_share_of_text": runs[-1]["cache_bytes"] / text if text else None}
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1)
    print(f"store {runs[-1]['cache_bytes']} bytes = {out['store_share_of_text']:.1%} of {text} source bytes",
          file=sys.stderr)


if __name__ == "__main__":
    main()
