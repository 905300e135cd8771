#!/usr/bin/env python3
"""A prototype of the structure signal of issue #39 item 3, to decide whether it earns its place
in `search` before it is built in Rust: re-ranks `search`'s first 50 results on the
localization sets with one hop over the call structure among them.

  python3 bench/structure_proto.py SETS --server BIN [--only NAME,...] [--split dev] [--variant hard]

SETS: as `bench/localization.py` lays them out. For each result, the identifiers of its lines
(read from the checkout) say which other results it calls (their names appear in it); the K
best results (the "strong hits") then share β of their score with the results they call
(callees), with those that call them (callers), or both:

  s_i' = s_i + β · Σ_{h in top K, h ≠ i, h → i (callee) / i → h (caller)} s_h

Reports func@1/5/10 and file@5 for a grid of (direction, K, β); β = 0 is `search` as it is
(history included, as the server ranks today).
"""
import argparse, collections, json, os, re, sys, time

sys.path.insert(0, os.path.dirname(__file__))
from localization import Server  # noqa: E402
from history_proto import by_cutoff, hits_of, tally  # noqa: E402

IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{2,}")
GRID = [("none", 0, 0.0)] + [(d, k, b) for d in ("callees", "callers", "both")
                             for k in (3, 10) for b in (0.1, 0.3)]


def idents(tree, path, lo, hi, cache):
    if path not in cache:
        try:
            with open(os.path.join(tree, path), "rb") as f:
                cache[path] = f.read().split(b"\n")
        except OSError:
            cache[path] = []
    lines = cache[path][max(0, lo - 1):hi]
    return {m.decode() for line in lines for m in IDENT.findall(line)}


def rerank(rows, calls, direction, k, beta):
    if beta == 0:
        return rows
    strong = list(range(min(k, len(rows))))
    out = []
    for i, r in enumerate(rows):
        extra = 0.0
        for h in strong:
            if h == i:
                continue
            callee = i in calls[h]  # h calls i
            caller = h in calls[i]  # i calls h
            if (direction in ("callees", "both") and callee) or (direction in ("callers", "both") and caller):
                extra += rows[h][4]
        out.append((r, r[4] + beta * extra))
    return [r for r, _ in sorted(out, key=lambda x: -x[1])]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets"); ap.add_argument("--server", required=True); ap.add_argument("--only")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--variant", default="hard", choices=("full", "hard", "short"))
    ap.add_argument("--json")
    a = ap.parse_args()
    totals = {g: collections.Counter() for g in GRID}
    for name in sorted(os.listdir(a.sets)):
        if a.only and name not in a.only.split(","):
            continue
        suffix = "-short" if a.variant == "short" else ""
        path = os.path.join(a.sets, name, a.split + suffix + ".jsonl")
        if not os.path.exists(path):
            continue
        repo = {g: collections.Counter() for g in GRID}
        t0 = time.monotonic()
        for cutoff, ts in by_cutoff(path).items():
            tree = os.path.join(a.sets, name, "trees", cutoff)
            server = Server(a.server, tree)
            cache = {}
            for t in ts:
                q = t["query"] if a.variant == "full" else t["query_hard"]
                rows = hits_of(server.call("search", {"query": q, "head_limit": 50}))
                ids = [idents(tree, r[0], r[1], r[2], cache) for r in rows]
                by_name = collections.defaultdict(set)
                for j, r in enumerate(rows):
                    if len(r[3]) >= 3:
                        by_name[r[3]].add(j)
                calls = [{j for n in ids[i] for j in by_name.get(n, ()) if j != i} for i in range(len(rows))]
                for g in GRID:
                    tally(repo[g], rerank(rows, calls, *g), t)
            server.close()
        for g in GRID:
            totals[g].update(repo[g])
        base = repo[GRID[0]]
        print(f"{name} ({base['n']} tasks, {time.monotonic() - t0:.0f}s): " + "  ".join(
            f"{g}: {100 * repo[g]['func@5'] / max(1, base['n_func']):.1f}" for g in GRID[:7]), file=sys.stderr)
    print("| direction | K | β | func@1 | func@5 | func@10 | file@5 |\n|---|---|---|---|---|---|---|")
    for g in GRID:
        c = totals[g]
        f = lambda key, n: 100 * c[key] / max(1, n)  # noqa: E731
        print(f"| {g[0]} | {g[1]} | {g[2]} | {f('func@1', c['n_func']):.1f} | {f('func@5', c['n_func']):.1f} | "
              f"{f('func@10', c['n_func']):.1f} | {f('file@5', c['n']):.1f} |")
    if a.json:
        with open(a.json, "w") as out:
            json.dump({str(g): dict(c) for g, c in totals.items()}, out, indent=1)


if __name__ == "__main__":
    main()
