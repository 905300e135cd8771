#!/usr/bin/env python3
"""A prototype of the history signals of issue #39, to decide whether they earn their place
in `search` before it is built in Rust: re-ranks `search`'s first 50 results on the
localization sets with what the tree's own git history says.

  python3 bench/history_proto.py SETS --server BIN [--only NAME,...] [--split dev] [--variant hard]

SETS: as `bench/localization.py` lays them out (SETS/OWNER+NAME/{dev,heldout}.jsonl, trees/).
Each tree is a checkout of its cutoff commit with only that commit's ancestors, so nothing
here can see the fix. Signals, per file (paths of the cutoff tree):
  similar  the past commits whose messages are most like the query (BM25 over the last
           MAX_COMMITS messages, the 20 best) vote for the files they touched, each vote its
           similarity decayed by age (half-life a year);
  prior    how often the file changed in the last two years (log scale).
  names    the same commits vote for the names of their diffs: the definitions git's hunk
           headers name (1) and the identifiers of the changed lines (0.3), so a result
           whose name they touched gains.
A result's score becomes score · (1 + α · similar~ + β · prior~ + γ · names~), ~ = divided by
the largest over the results. Reports func@1/5/10 and file@5 for a grid of (α, β); (0, 0) is
`search` as it is. This reads history with `git` (a prototype); the server will read it
with gix.
"""
import argparse, collections, json, math, os, re, subprocess, sys, time

sys.path.insert(0, os.path.dirname(__file__))
from localization import Server  # noqa: E402

MAX_COMMITS = 20000
TOP_COMMITS = 20
STOP = set("the a an of to in and or is are be for on with this that it as at by from when not fix fixed fixes "
           "bug issue use used using should".split())


def toks(text):
    out = []
    for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
        parts = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", w.replace("_", " "))
        for p in parts + ([w] if len(parts) > 1 else []):
            p = p.lower()
            if len(p) > 1 and p not in STOP:
                out.append(p)
    return out


def history(tree):
    """[(unix time, message tokens, [paths])] of the tree's history, newest first."""
    out = subprocess.run(["git", "-C", tree, "log", "--no-merges", f"-{MAX_COMMITS}", "--format=%x1e%ct%x1f%H%x1f%B%x1f",
                          "--name-only", "--no-renames"], capture_output=True, text=True, errors="replace").stdout
    commits = []
    for rec in out.split("\x1e")[1:]:
        ct, sha, msg, names = (rec.split("\x1f") + ["", "", ""])[:4]
        paths = [p for p in names.split("\n") if p.strip()]
        commits.append((int(ct), toks(msg), paths, sha))
    return commits


class Bm25:
    def __init__(self, docs):
        self.docs = docs
        self.df = collections.Counter(t for d in docs for t in set(d))
        self.avg = sum(map(len, docs)) / max(1, len(docs))
        self.post = collections.defaultdict(list)
        for i, d in enumerate(docs):
            for t, n in collections.Counter(d).items():
                self.post[t].append((i, n))

    def top(self, q, k, k1=1.2, b=0.75):
        n = len(self.docs)
        score = collections.defaultdict(float)
        for t in set(q):
            df = self.df.get(t)
            if not df:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for i, tf in self.post[t]:
                score[i] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(self.docs[i]) / self.avg))
        return sorted(score.items(), key=lambda x: -x[1])[:k]


SHOWN = {}
HEADERS = {}  # names seen in a hunk header of some commit


def touched_names(tree, sha):
    """{identifier: weight} of a past commit's diff: the enclosing definitions git's hunk
    headers name (1), and the identifiers on its changed lines (0.3)."""
    if sha not in SHOWN:
        out = subprocess.run(["git", "-C", tree, "show", "-U0", "--format=", "--no-color", sha],
                             capture_output=True, text=True, errors="replace").stdout
        names = collections.defaultdict(float)
        for line in out.split("\n")[:4000]:
            if line.startswith("@@"):
                for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", line.split("@@")[-1]):
                    names[w] = max(names[w], 1.0)
                    HEADERS[w] = True
            elif line[:1] in "+-" and not line.startswith(("+++", "---")):
                for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", line):
                    names[w] = max(names[w], 0.3)
        SHOWN[sha] = dict(names)
    return SHOWN[sha]


def signals(commits, bm, now, query, tree):
    similar = collections.defaultdict(float)
    named = collections.defaultdict(float)
    for i, s in bm.top(toks(query), TOP_COMMITS):
        ct, _, paths, sha = commits[i]
        decay = 0.5 ** (max(0, now - ct) / (365 * 86400))
        for p in paths:
            similar[p] += s * decay / len(paths) ** 0.5
        for n, w in touched_names(tree, sha).items():
            named[n] += s * decay * w
    prior = collections.Counter()
    for ct, _, paths, _ in commits:
        if now - ct <= 2 * 365 * 86400:
            prior.update(paths)
    return similar, prior, named


def hits_of(result):
    out = []
    for f in (result.get("structuredContent") or {}).get("files") or []:
        for r in f["results"]:
            out.append((f["path"], r["line"], r["end_line"], r.get("name") or "", r["score"]))
    return out


def by_cutoff(path):
    """The tasks of a set file, grouped by cutoff (one checkout each), in the file's order."""
    groups = collections.defaultdict(list)
    for line in open(path):
        t = json.loads(line)
        groups[t["cutoff"]].append(t)
    return groups


def tally(c, ranked, t):
    """Counts task `t`'s func@1/5/10 and file@1/5/10 for the ranking `ranked` into `c`."""
    c["n"] += 1
    for k in (1, 5, 10):
        func, file = judge(ranked, t, k)
        if func is not None:
            c[f"func@{k}"] += func
        c[f"file@{k}"] += file
    c["n_func"] += bool(t["gold"])


def judge(rows, t, k):
    gold = t["gold"]
    func = any(any(p == g["path"] and (lo <= g["end"] and g["line"] <= hi or n == g["name"]) for g in gold)
               for p, lo, hi, n, _ in rows[:k]) if gold else None
    files = []
    for p, *_ in rows:
        if p not in files:
            files.append(p)
    return func, any(p in t["files"] for p in files[:k])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets"); ap.add_argument("--server", required=True); ap.add_argument("--only")
    ap.add_argument("--split", default="dev"); ap.add_argument("--variant", default="hard", choices=("full", "hard"))
    ap.add_argument("--json")
    ap.add_argument("--expand", type=int, default=0,
                    help="instead of re-ranking: add the N names the similar commits' diffs touched most "
                         "(hunk-header names only) to the query, and rank again")
    a = ap.parse_args()
    grid = [(0, 0, 0), (0.25, 0, 0), (0, 0, 0.25), (0, 0, 0.5), (0, 0, 1), (0.25, 0, 0.25), (0.25, 0, 0.5),
            (0.5, 0, 0.5)]
    totals = {g: collections.Counter() for g in grid}
    per_repo = {}
    for name in sorted(os.listdir(a.sets)):
        if a.only and name not in a.only.split(","):
            continue
        path = os.path.join(a.sets, name, a.split + ".jsonl")
        if not os.path.exists(path):
            continue
        repo = {g: collections.Counter() for g in grid}
        t0 = time.monotonic()
        for cutoff, ts in by_cutoff(path).items():
            tree = os.path.join(a.sets, name, "trees", cutoff)
            commits = history(tree)
            now = commits[0][0] if commits else 0
            bm = Bm25([c[1] for c in commits])
            server = Server(a.server, tree)
            for t in ts:
                q = t["query_hard" if a.variant == "hard" else "query"]
                similar, prior, named = signals(commits, bm, now, q, tree)
                if a.expand:
                    heads = {n: w for n, w in named.items() if HEADERS.get(n)}
                    extra = sorted(heads, key=lambda n: -heads[n])[:a.expand]
                    q = q + "\n" + " ".join(extra)
                rows = hits_of(server.call("search", {"query": q, "head_limit": 50}))
                ms = max([similar.get(r[0], 0) for r in rows] + [1e-9])
                mp = max([math.log1p(prior.get(r[0], 0)) for r in rows] + [1e-9])
                mn = max([named.get(r[3], 0) for r in rows] + [1e-9])
                for g in grid:
                    al, be, ga = g
                    ranked = sorted(rows, key=lambda r: -r[4] * (1 + al * similar.get(r[0], 0) / ms
                                                               + be * math.log1p(prior.get(r[0], 0)) / mp
                                                               + ga * named.get(r[3], 0) / mn))
                    tally(repo[g], ranked, t)
            server.close()
        per_repo[name] = {str(g): dict(c) for g, c in repo.items()}
        for g in grid:
            totals[g].update(repo[g])
        base = repo[(0, 0, 0)]
        print(f"{name} ({base['n']} tasks, {time.monotonic() - t0:.0f}s): " + "  ".join(
            f"{g}: func@5 {100 * repo[g]['func@5'] / max(1, base['n_func']):.1f}" for g in grid), file=sys.stderr)
    print("| α (similar, files) | β (prior) | γ (similar, names) | func@1 | func@5 | func@10 | file@5 |")
    print("|---|---|---|---|---|---|---|")
    for g in grid:
        c = totals[g]
        f = lambda k: 100 * c[k] / max(1, c["n_func"])
        print(f"| {g[0]} | {g[1]} | {g[2]} | {f('func@1'):.1f} | {f('func@5'):.1f} | {f('func@10'):.1f} | "
              f"{100 * c['file@5'] / max(1, c['n']):.1f} |")
    if a.json:
        json.dump({"split": a.split, "variant": a.variant, "per_repo": per_repo,
                   "totals": {str(g): dict(c) for g, c in totals.items()}}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
