#!/usr/bin/env python3
"""Development and held-out localization sets for `search` (issue #39), on repositories the
ranking was never tuned on, built and scored with the shared method
(`../shared/bench/localization/`: `build_tasks.py` for tasks on pre-fix trees with their
history, `eval.py` for the routes: BM25 over files, BM25 over functions (the yardstick), the
grep route and rootgrep's `search`).

  python3 bench/localization.py build LOC MIRRORS SETS   # tasks + trees (one git mirror per repo)
  python3 bench/localization.py run LOC SETS --server BIN --out DIR [--only NAME,...]
  python3 bench/localization.py table DIR                # DIR/summary.md from DIR/*.json

LOC: the shared localization folder (build_tasks.py, eval.py). MIRRORS: a folder holding each
repository's git directory as OWNER+NAME/repo (full history). SETS: where the tasks and trees go
(SETS/OWNER+NAME/{tasks.jsonl, trees/}); never committed, the task files are copied to
bench/results/localization/.

Each repository has three cutoffs: the first two windows are the **development** split, the
last window (the latest commits) the **held-out** split, scored separately. Three query
variants: `full` (subject + body), `hard` (without the `area:` prefix) and `short` (the subject
alone, without its prefix: how an agent asks); `--oracle` adds a fourth, the short query plus
the gold functions' names (the ceiling of `expand`). On top of eval.py's figures this script measures
what an agent reads: the share of the fix's lines (`changed`, as the cutoff tree's lines) that
appear as `N:` lines in the first 16 KiB of `search`'s text answer (`budget_shown`), and the
share inside a result's line range whose header is in those 16 KiB (`budget_range`).
"""
import argparse, collections, json, os, re, subprocess, sys, time

# name, language (build_tasks), rg type (eval), cutoffs (the last one starts the held-out window),
# the commit each history ends at (pinned so that a rebuild gives the same tasks).
REPOS = [
    ("redis+redis", "c", "c", ["2020-06-01", "2021-09-01", "2023-01-01"], "4f8cdc2a1ea53e42955af758aabffee67cb455dd"),
    ("curl+curl", "c", "c", ["2022-01-01", "2023-01-01", "2024-06-01"], "5c61e168698a72b87437d58ed728bcdea6d5db42"),
    ("BurntSushi+ripgrep", "rust", "rust", ["2018-06-01", "2020-06-01", "2023-01-01"], "3fce3b5bb0236da2df6d99672afb8a719642eca7"),
    ("helix-editor+helix", "rust", "rust", ["2022-01-01", "2023-01-01", "2024-06-01"], "079a789e8cb08ead67f19e1971a1b7438b37354b"),
    ("pypa+pip", "python", "py", ["2021-01-01", "2022-06-01", "2024-01-01"], "6d309205789d368b2749d93fd6193d584811efd5"),
    ("sphinx-doc+sphinx", "python", "py", ["2021-01-01", "2022-06-01", "2024-01-01"], "e44a40eb2f810558ccd9da1425421270ccb81351"),
    ("pallets+flask", "python", "py", ["2018-01-01", "2020-01-01", "2022-06-01"], "2ac89889f4cc330eabd50f295dcef02828522c69"),
    ("pallets+werkzeug", "python", "py", ["2019-01-01", "2021-01-01", "2023-01-01"], "1b00618e787f40dfb21eba29caf8f8be7c8e1d93"),
]
VARIANTS = {"full": False, "hard": True, "short": True}  # variant -> eval.py --hard
# `--oracle`: the short query plus the gold functions' names, what a perfect rewrite by the
# host's model (`expand`) would add: the ceiling of that signal, not a figure of it.
ORACLE = {"oracle": True}
BUDGET = 16 * 1024


def build(a):
    for name, lang, _, cutoffs, head in REPOS:
        gitdir = os.path.join(a.mirrors, name, "repo")
        out = os.path.join(a.sets, name)
        os.makedirs(out, exist_ok=True)
        cmd = [sys.executable, os.path.join(a.loc, "build_tasks.py"), gitdir, os.path.join(out, "tasks.jsonl"),
               "--lang", lang, "--tree", os.path.join(out, "trees"), "--preimage", "span", "--history",
               "--n", "600", "--head", head] + sum([["--cutoff", c] for c in cutoffs], [])
        print("+", " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=True)


def splits(sets, name, cutoffs):
    """Writes SETS/NAME/{dev,heldout}{,-short}.jsonl; returns {split: count}."""
    tasks = [json.loads(line) for line in open(os.path.join(sets, name, "tasks.jsonl"))]
    out = {}
    for split, keep in (("dev", lambda t: t["cutoff"] != cutoffs[-1]), ("heldout", lambda t: t["cutoff"] == cutoffs[-1])):
        chosen = [t for t in tasks if keep(t)]
        out[split] = len(chosen)
        with open(os.path.join(sets, name, split + ".jsonl"), "w") as f:
            f.writelines(json.dumps(t) + "\n" for t in chosen)
        with open(os.path.join(sets, name, split + "-short.jsonl"), "w") as f:
            for t in chosen:
                t = dict(t, query_hard=t["query_hard"].split("\n")[0], query=t["query"].split("\n")[0])
                f.write(json.dumps(t) + "\n")
        with open(os.path.join(sets, name, split + "-oracle.jsonl"), "w") as f:
            for t in chosen:
                gold = " ".join(sorted({g["name"] for g in t["gold"]}))
                subject = t["query_hard"].split("\n")[0]
                f.write(json.dumps(dict(t, query_hard=subject + ("\n" + gold if gold else ""))) + "\n")
    return out


def evaluate(a, name, rgtype, split, variant):
    path = os.path.join(a.sets, name, split + ("" if variant in ("full", "hard") else "-" + variant) + ".jsonl")
    cmd = [sys.executable, os.path.join(a.loc, "eval.py"), path, os.path.join(a.sets, name, "trees"),
           "--type", rgtype, "--server", a.server] + (["--hard"] if variant != "full" else [])
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    values = {}
    for line in out.splitlines():
        if line.startswith("VALUE "):
            _, key, value = line.split()
            values[key] = float(value)
    return values


class Server:
    """One rootgrep over one tree, spoken to as eval.py does (JSON-RPC lines on stdio)."""

    def __init__(self, binary, tree):
        self.p = subprocess.Popen([binary, tree], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.id = 0
        self.req("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "localization", "version": "1"}})
        self.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.p.stdin.flush()
        t0 = time.monotonic()
        while time.monotonic() - t0 < 1800:
            roots = (self.call("list_roots", {}).get("structuredContent") or {}).get("roots") or []
            if roots and all("fresh" in str(r.get("index")) and str(r.get("symbols", "ready")).startswith(("ready", "off"))
                             and str(r.get("search", "ready")).startswith(("ready", "off"))
                             and str(r.get("history", "ready")).startswith(("ready", "none", "off")) for r in roots):
                break
            time.sleep(0.5)

    def req(self, method, params):
        self.id += 1
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}) + "\n").encode())
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit("server closed stdout")
            m = json.loads(line)
            if m.get("id") == self.id:
                return m.get("result", {})

    def call(self, tool, args):
        return self.req("tools/call", {"name": tool, "arguments": args})

    def close(self):
        self.p.stdin.close()
        self.p.wait(30)


def shown_lines(text, structured):
    """(lines shown as `N:` and lines inside a result range) within the first BUDGET bytes, as
    {(path, line)} sets."""
    head = text.encode()[:BUDGET].decode(errors="ignore")
    shown, ranges, path = set(), set(), None
    headers = 0
    for line in head.split("\n"):
        if line.startswith("@@"):
            headers += 1
        elif re.match(r"^\d+:", line):
            shown.add((path, int(line.split(":", 1)[0])))
        elif line and not line[0].isspace() and not line.startswith("…"):
            path = line.strip()
    rows = []
    for f in (structured or {}).get("files") or []:
        rows += [(f["path"], r["line"], r["end_line"]) for r in f["results"]]
    for p, lo, hi in rows[:headers]:
        ranges.update((p, n) for n in range(lo, hi + 1))
    return shown, ranges


def budget(a, name, split, variant):
    """Mean share of the fix's lines in the first 16 KiB (shown, in range), over the tasks."""
    path = os.path.join(a.sets, name, split + ("" if variant in ("full", "hard") else "-" + variant) + ".jsonl")
    tasks = [json.loads(line) for line in open(path)]
    key = "query_hard" if variant != "full" else "query"
    by_cutoff = collections.defaultdict(list)
    for t in tasks:
        by_cutoff[t["cutoff"]].append(t)
    got_shown, got_range, n = 0.0, 0.0, 0
    for cutoff, ts in by_cutoff.items():
        server = Server(a.server, os.path.join(a.sets, name, "trees", cutoff))
        for t in ts:
            gold = set()
            for p, hunks in t["changed"].items():
                for x, b in hunks:
                    gold.update((p, y) for y in (range(x, x + b) if b else [max(x, 1)]))
            if not gold:
                continue
            r = server.call("search", {"query": t[key], "head_limit": 10})
            text = "".join(c.get("text", "") for c in r.get("content", []))
            shown, ranges = shown_lines(text, r.get("structuredContent"))
            got_shown += len(gold & shown) / len(gold)
            got_range += len(gold & ranges) / len(gold)
            n += 1
        server.close()
    return {"budget_shown": 100 * got_shown / max(n, 1), "budget_range": 100 * got_range / max(n, 1), "budget_n": n}


def run(a):
    os.makedirs(a.out, exist_ok=True)
    only = set(a.only.split(",")) if a.only else None
    for name, lang, rgtype, cutoffs, _ in REPOS:
        if only and name not in only:
            continue
        counts = splits(a.sets, name, cutoffs)
        result = {"repo": name, "lang": lang, "cutoffs": cutoffs, "tasks": counts, "figures": {}}
        for split in a.splits.split(","):
            for variant in (a.variants.split(",") if a.variants else list(VARIANTS)) + (list(ORACLE) if a.oracle else []):
                t0 = time.monotonic()
                values = evaluate(a, name, rgtype, split, variant)
                if not a.no_budget:
                    values.update(budget(a, name, split, variant))
                result["figures"][f"{split}/{variant}"] = values
                print(f"{name} {split}/{variant}: search func@5 {values.get('rootgrep_func_at_5')} "
                      f"bm25-func {values.get('bm25-func_func_at_5')} ({time.monotonic() - t0:.0f}s)", file=sys.stderr)
        with open(os.path.join(a.out, name + ".json"), "w") as f:
            json.dump(result, f, indent=1)
    table(a)


def pooled(results, lang, split, variant, key, weight):
    """A figure over several repositories: the task-weighted mean."""
    num = den = 0.0
    for r in results:
        if lang and r["lang"] != lang:
            continue
        v = r["figures"].get(f"{split}/{variant}", {})
        if key in v and v.get(weight):
            num += v[key] * v[weight]
            den += v[weight]
    return (num / den, int(den)) if den else (None, 0)


def table(a):
    results = [json.load(open(os.path.join(a.out, f))) for f in sorted(os.listdir(a.out)) if f.endswith(".json")]
    rows = ["| set | split | query | tasks (func) | search func@1/5/10 | BM25-func func@5 | Δ func@5 | "
            "search file@1/5/10 | BM25-file file@5 | grep route file@5 | 16 KiB shown / range |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    groups = [(r["repo"], [r]) for r in results] + \
             [(f"**{lang}** (pooled)", [r for r in results if r["lang"] == lang]) for lang in ("c", "rust", "python")] + \
             [("**all** (pooled)", results)]
    for label, rs in groups:
        if not rs:
            continue
        for split in ("dev", "heldout"):
            for variant in list(VARIANTS) + list(ORACLE):
                f = lambda key, w="rootgrep_n_func": pooled(rs, None, split, variant, key, w)[0]
                n, nf = pooled(rs, None, split, variant, "rootgrep_n", "rootgrep_n")[1], \
                    pooled(rs, None, split, variant, "rootgrep_n_func", "rootgrep_n_func")[1]
                if not n:
                    continue
                fmt = lambda v: "–" if v is None else f"{v:.1f}"
                s5, b5 = f("rootgrep_func_at_5"), f("bm25-func_func_at_5")
                rows.append(
                    f"| {label} | {split} | {variant} | {n} ({nf}) | "
                    f"{fmt(f('rootgrep_func_at_1'))} / {fmt(s5)} / {fmt(f('rootgrep_func_at_10'))} | {fmt(b5)} | "
                    f"{'–' if s5 is None or b5 is None else f'{s5 - b5:+.1f}'} | "
                    + " / ".join(fmt(f(f"rootgrep_file_at_{k}", "rootgrep_n")) for k in (1, 5, 10)) + " | "
                    f"{fmt(f('bm25-file_file_at_5', 'rootgrep_n'))} | {fmt(f('grep-route_file_at_5', 'rootgrep_n'))} | "
                    f"{fmt(f('budget_shown', 'budget_n'))} / {fmt(f('budget_range', 'budget_n'))} |")
    with open(os.path.join(a.out, "summary.md"), "w") as out:
        out.write("\n".join(rows) + "\n")
    print("\n".join(rows))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build"); b.add_argument("loc"); b.add_argument("mirrors"); b.add_argument("sets")
    r = sub.add_parser("run"); r.add_argument("loc"); r.add_argument("sets")
    r.add_argument("--server", required=True); r.add_argument("--out", required=True); r.add_argument("--only")
    r.add_argument("--splits", default="dev,heldout", help="tune on dev alone: --splits dev")
    r.add_argument("--variants", help="comma-separated, of full, hard, short (default: all three)")
    r.add_argument("--no-budget", action="store_true", help="skip the 16 KiB pass (a second server per tree)")
    r.add_argument("--oracle", action="store_true", help="also the short query plus the gold names (a perfect rewrite)")
    t = sub.add_parser("table"); t.add_argument("out")
    a = ap.parse_args()
    {"build": build, "run": run, "table": table}[a.cmd](a)


if __name__ == "__main__":
    main()
