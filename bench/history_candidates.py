#!/usr/bin/env python3
"""Would the history bring files the words miss? For each task of the localization sets: is a
fixed file among `search`'s first 50 results' files, and, when it is not, among the files the
past commits most like the query vote for (their N best)? An upper bound on what the history
could add as a source of candidates rather than as a re-ranker (issue #39, item 2).

  python3 bench/history_candidates.py SETS --server BIN [--split dev] [--variant hard] [--top 10]
"""
import argparse, collections, os, sys

sys.path.insert(0, os.path.dirname(__file__))
from localization import Server  # noqa: E402
from history_proto import Bm25, by_cutoff, history, hits_of, signals  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets"); ap.add_argument("--server", required=True)
    ap.add_argument("--split", default="dev"); ap.add_argument("--variant", default="hard", choices=("full", "hard"))
    ap.add_argument("--top", type=int, default=10)
    a = ap.parse_args()
    c = collections.Counter()
    for name in sorted(os.listdir(a.sets)):
        path = os.path.join(a.sets, name, a.split + ".jsonl")
        if not os.path.exists(path):
            continue
        for cutoff, ts in by_cutoff(path).items():
            tree = os.path.join(a.sets, name, "trees", cutoff)
            commits = history(tree)
            now = commits[0][0] if commits else 0
            bm = Bm25([x[1] for x in commits])
            server = Server(a.server, tree)
            for t in ts:
                q = t["query_hard" if a.variant == "hard" else "query"]
                rows = hits_of(server.call("search", {"query": q, "head_limit": 50}))
                shown = {r[0] for r in rows}
                similar, _, _ = signals(commits, bm, now, q, tree)
                voted = [p for p, _ in sorted(similar.items(), key=lambda x: -x[1])[:a.top]]
                gold = set(t["files"])
                c["tasks"] += 1
                c["in_50"] += bool(gold & shown)
                c["voted"] += bool(gold & set(voted))
                c["only_voted"] += bool(gold & set(voted)) and not (gold & shown)
                c["voted_files"] += len(voted)
                c["voted_new_files"] += len(set(voted) - shown)
            server.close()
        print(name, dict(c), file=sys.stderr)
    n = max(1, c["tasks"])
    print(f"tasks {c['tasks']}: a fixed file among search's first 50 results {100 * c['in_50'] / n:.1f} %; "
          f"among the history's {a.top} best-voted files {100 * c['voted'] / n:.1f} %; "
          f"only there (the words miss it) {100 * c['only_voted'] / n:.1f} %; "
          f"voted files not among the 50: {c['voted_new_files'] / n:.1f} of {c['voted_files'] / n:.1f} a task")


if __name__ == "__main__":
    main()
