#!/usr/bin/env python3
"""Agreement of rootgrep's definitions with Universal Ctags (PRODUCT §13: "definitions of
functions and types agree with Universal Ctags (same name, file and line) for >= 95 % of a
random sample, both ways").

    python3 bench/ctags_agreement.py --root bench-corpora/nuttx --lang c \
        --out bench/results/ctags-agreement/nuttx.json [--n 500] [--files 300] [--seed 1] \
        [--server target/release/rootgrep] [--jobs 2] [--examples 15]

Both directions, each a seeded random sample (same seed, same tree, same tools → same result):
  ctags → rootgrep: `ctags -R --output-format=json --fields=+nKzZE` runs over --root (from
    --root, paths relative to it); --n of its function and type definitions are drawn and each
    is looked up in `rootgrep call outline {"path":FILE} --json` of its file.
  rootgrep → ctags: --files files of the language are drawn, outlined, and --n of their
    function and type definitions are drawn from that pool and looked up in ctags' tags.

Languages and kinds (a file is C when it ends in .c or .h — rootgrep's mapping; ctags runs
with --langmap=C:.c.h so that headers are C for it too — and Rust when it ends in .rs):
  C      ctags function, struct, union, enum, typedef   rootgrep function, struct, union, enum, type
  Rust   ctags function, method, struct, enum,          rootgrep function, method, struct, enum,
         interface (a trait), typedef (a type alias)             trait, type, union
         (Universal Ctags 5.9's Rust parser has no union kind: rootgrep's unions count only
         rootgrep → ctags, where they can only be found with another kind or not at all)
Within these sets a kind difference (ctags function vs rootgrep method) still counts as
agreement; it is reported apart. ctags' anonymous types (__anon…, `extras: anonymous`) are
left out: they have no name a user could ask for.

Same line: ctags gives the line of the name; rootgrep gives the definition's first line and
its signature is the name's line, so the name's line is found as the first line of the range
whose trimmed text is the signature. A definition agrees when ctags' line is either.

Categories of a disagreement, ctags → rootgrep: `missing` (no definition of that name in the
file), `line differs` (one at another line), `other kind in rootgrep` (the name at that line,
as a macro, constant…), `file over 1 MiB` (rootgrep does not parse such files, by design),
`outline failed`. rootgrep → ctags: `missing`, `line differs`, `other kind in ctags` (ctags
tags it at that line, as a prototype, variable, member…: for this lookup ctags also tags C
prototypes and extern variables, `--kinds-C=+px`; Rust's kinds are all on by default). A C
disagreement inside an `#if 0` branch is noted as such (ctags skips those branches, rootgrep
does not). Each category prints --examples cases (file:line name [kinds] and the line's
text); the JSON written to --out holds every disagreement.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import random
import subprocess
import sys
import time

LANGS = {
    "c": {
        "ctags_lang": "C",
        "ctags_extra": ["--langmap=C:.c.h", "--kinds-C=+px"],
        "extensions": (".c", ".h"),
        "ctags_kinds": {"function", "struct", "union", "enum", "typedef"},
        "rootgrep_kinds": {"function", "struct", "union", "enum", "type"},
    },
    "rust": {
        "ctags_lang": "Rust",
        "ctags_extra": [],
        "extensions": (".rs",),
        "ctags_kinds": {"function", "method", "struct", "enum", "interface", "typedef"},
        "rootgrep_kinds": {"function", "method", "struct", "enum", "trait", "type", "union"},
    },
}

MAX_PARSE_BYTES = 1 << 20


def run_ctags(root, spec):
    cmd = ["ctags", "-R", "--output-format=json", "--fields=+nKzZE",
           f"--languages={spec['ctags_lang']}", *spec["ctags_extra"], "-f", "-", "."]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"ctags failed: {proc.stderr[:2000]}")
    tags = []
    for line in proc.stdout.splitlines():
        try:
            tag = json.loads(line)
        except json.JSONDecodeError:
            continue
        if tag.get("_type") != "tag" or "line" not in tag:
            continue
        path = tag["path"][2:] if tag["path"].startswith("./") else tag["path"]
        if not path.endswith(spec["extensions"]):
            continue
        extras = tag.get("extras", "")
        tags.append({
            "path": path,
            "name": tag["name"],
            "line": int(tag["line"]),
            "kind": tag.get("kind", ""),
            "anonymous": "anonymous" in extras or tag["name"].startswith("__anon"),
        })
    tags.sort(key=lambda t: (t["path"], t["line"], t["name"], t["kind"]))
    return tags, cmd


def ctags_version():
    out = subprocess.run(["ctags", "--version"], capture_output=True, text=True).stdout
    return out.splitlines()[0] if out else "?"


def language_files(root, spec):
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            if name.endswith(spec["extensions"]):
                full = os.path.join(dirpath, name)
                if os.path.isfile(full) and not os.path.islink(full):
                    files.append(os.path.relpath(full, root))
    files.sort()
    return files


def read_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    return [line.rstrip(b"\r").decode("utf-8", "replace") for line in lines], len(data)


def name_line(lines, d):
    """The first line of d's range whose trimmed text is d's signature (else its first line)."""
    sig = d.get("signature", "")
    cut = sig.endswith("…")
    for n in range(d["line"], min(d["end_line"], len(lines)) + 1):
        text = lines[n - 1].strip()
        if text == sig or (cut and text.startswith(sig[:-1])):
            return n
    return d["line"]


def outline(server, root, rel):
    """rootgrep's definitions of one file (all kinds, every page), each with its name line."""
    full = os.path.join(root, rel)
    defs, offset = [], 0
    while True:
        args = {"path": full, "head_limit": 5000, "offset": offset}
        proc = subprocess.run([server, "call", "outline", json.dumps(args), root, "--json"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return None, (proc.stdout + proc.stderr).strip()[:300]
        try:
            out = json.loads(proc.stdout)
        except json.JSONDecodeError:
            return None, proc.stdout[:300]
        for f in out.get("files", []):
            defs.extend(f.get("definitions", []))
        if not out.get("truncated") or out.get("next_offset") is None:
            break
        offset = out["next_offset"]
    try:
        lines, _ = read_lines(full)
    except OSError as err:
        return None, str(err)
    for d in defs:
        d["name_line"] = name_line(lines, d)
    return defs, None


def in_if0(lines, line):
    """True when 1-based `line` is inside an `#if 0` branch (ctags skips those, --if0=no)."""
    stack = []  # per open #if: True while in a branch that is #if 0
    for n, text in enumerate(lines[:line], 1):
        t = text.strip()
        if not t.startswith("#"):
            continue
        word = t[1:].strip().split(None, 1)
        head = word[0] if word else ""
        rest = word[1].split("/*")[0].split("//")[0].strip() if len(word) > 1 else ""
        if head in ("if", "ifdef", "ifndef"):
            stack.append(head == "if" and rest == "0")
        elif head in ("elif", "else") and stack:
            stack[-1] = False
        elif head == "endif" and stack:
            stack.pop()
    return any(stack)


def line_text(root, rel, line):
    try:
        lines, _ = read_lines(os.path.join(root, rel))
        return lines[line - 1].strip()[:160] if 0 < line <= len(lines) else ""
    except OSError:
        return ""


def outline_all(server, root, files, jobs):
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(outline, server, root, rel): rel for rel in files}
        for fut in concurrent.futures.as_completed(futures):
            results[futures[fut]] = fut.result()
    return results


def classify(case, named, kinds, who, line_key, same_line, distance):
    """Sets case["category"] from `named`, the other tool's (`who`'s) entries with the
    case's name: "agree" (on the same line, a kind of `kinds`), another kind on that line,
    the name defined elsewhere in the file ("line differs", with the nearest one's line),
    or "missing"; with the other tool's kind (and line) where it has one."""
    at = [x for x in named if same_line(x)]
    in_set = [x for x in at if x["kind"] in kinds]
    elsewhere = [x for x in named if x["kind"] in kinds]
    if in_set:
        case["category"] = "agree"
        case[f"{who}_kind"] = in_set[0]["kind"]
    elif at:
        case["category"] = f"other kind in {who}"
        case[f"{who}_kind"] = at[0]["kind"]
    elif elsewhere:
        case["category"] = "line differs"
        near = min(elsewhere, key=distance)
        case[f"{who}_kind"] = near["kind"]
        case[f"{who}_line"] = near[line_key]
    else:
        case["category"] = "missing"


def forward(root, spec, tags, sample, outlines):
    """ctags → rootgrep for each sampled ctags tag."""
    cases = []
    for t in sample:
        rel = t["path"]
        case = {"path": rel, "name": t["name"], "line": t["line"], "ctags_kind": t["kind"]}
        size = os.path.getsize(os.path.join(root, rel))
        defs, err = outlines[rel]
        if size > MAX_PARSE_BYTES:
            case["category"] = "file over 1 MiB (not parsed by rootgrep)"
        elif defs is None:
            case["category"] = "outline failed"
            case["error"] = err
        else:
            named = [d for d in defs if d["name"] == t["name"]]
            classify(case, named, spec["rootgrep_kinds"], "rootgrep", "name_line",
                     same_line=lambda d: t["line"] in (d["name_line"], d["line"]),
                     distance=lambda d: abs(d["name_line"] - t["line"]))
        cases.append(case)
    return cases


def reverse(spec, ctags_by_file, sample):
    """rootgrep → ctags for each sampled rootgrep definition."""
    cases = []
    for rel, d in sample:
        case = {"path": rel, "name": d["name"], "line": d["name_line"], "start_line": d["line"],
                "rootgrep_kind": d["kind"]}
        named = [t for t in ctags_by_file.get(rel, []) if t["name"] == d["name"]]
        classify(case, named, spec["ctags_kinds"], "ctags", "line",
                 same_line=lambda t: t["line"] in (d["name_line"], d["line"]),
                 distance=lambda t: abs(t["line"] - d["name_line"]))
        cases.append(case)
    return cases


def kinds_agree(lang, ctags_kind, rootgrep_kind):
    same = {"typedef": "type", "interface": "trait"}
    return same.get(ctags_kind, ctags_kind) == rootgrep_kind


def summarize(lang, cases, root, examples):
    counts = collections.Counter(c["category"] for c in cases)
    agree = counts.get("agree", 0)
    by_kind = collections.Counter()
    kind_pairs = collections.Counter()
    kind_examples = []
    for c in cases:
        if c["category"] != "agree":
            by_kind[(c["category"], c.get("ctags_kind", "-"), c.get("rootgrep_kind", "-"))] += 1
        elif not kinds_agree(lang, c["ctags_kind"], c["rootgrep_kind"]):
            kind_pairs[(c["ctags_kind"], c["rootgrep_kind"])] += 1
            if sum(1 for k in kind_examples if (k["ctags_kind"], k["rootgrep_kind"]) ==
                   (c["ctags_kind"], c["rootgrep_kind"])) < 3:
                kind_examples.append(dict(c, text=line_text(root, c["path"], c["line"])))
    shown = {}
    for c in cases:
        if c["category"] == "agree":
            continue
        bucket = shown.setdefault(c["category"], [])
        c["text"] = line_text(root, c["path"], c["line"])
        if lang == "c":
            try:
                lines, _ = read_lines(os.path.join(root, c["path"]))
                if in_if0(lines, c["line"]):
                    c["note"] = "inside #if 0"
            except OSError:
                pass
        if len(bucket) < examples:
            bucket.append(c)
    notes = collections.Counter(c["note"] for c in cases if c.get("note"))
    return {
        "sample": len(cases),
        "notes": dict(notes),
        "agree": agree,
        "agree_pct": round(100.0 * agree / len(cases), 2) if cases else None,
        "categories": dict(counts.most_common()),
        "disagreements_by_kind": [
            {"category": k[0], "ctags_kind": k[1], "rootgrep_kind": k[2], "count": n}
            for k, n in by_kind.most_common()],
        "agree_with_other_kind": [
            {"ctags_kind": k[0], "rootgrep_kind": k[1], "count": n} for k, n in kind_pairs.most_common()],
        "agree_with_other_kind_examples": kind_examples,
        "examples": shown,
        "cases": [c for c in cases if c["category"] != "agree"],
    }


def print_direction(title, s):
    print(f"\n{title}: {s['agree']}/{s['sample']} agree = {s['agree_pct']} %")
    for cat, n in s["categories"].items():
        print(f"  {cat:45s} {n}")
    for note, n in s["notes"].items():
        print(f"  of the disagreements, {note}: {n}")
    if s["agree_with_other_kind"]:
        print("  agreeing, kinds named differently: " + ", ".join(
            f"{k['ctags_kind']}→{k['rootgrep_kind']} {k['count']}" for k in s["agree_with_other_kind"]))
    for c in s["agree_with_other_kind_examples"]:
        print(f"     {c['path']}:{c['line']} {c['name']} [ctags {c['ctags_kind']}, rootgrep "
              f"{c['rootgrep_kind']}]  {c['text']}")
    for k in s["disagreements_by_kind"]:
        print(f"    {k['category']:35s} ctags={k['ctags_kind']:10s} rootgrep={k['rootgrep_kind']:10s} {k['count']}")
    for cat, cases in s["examples"].items():
        print(f"  -- {cat}:")
        for c in cases:
            other = c.get("rootgrep_line") or c.get("ctags_line")
            extra = f" (other at {other})" if other else ""
            if c.get("note"):
                extra += f" [{c['note']}]"
            print(f"     {c['path']}:{c['line']} {c['name']} "
                  f"[ctags {c.get('ctags_kind', '-')}, rootgrep {c.get('rootgrep_kind', '-')}]{extra}  {c['text']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", required=True)
    ap.add_argument("--lang", choices=sorted(LANGS), required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--server", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "..", "target", "release", "rootgrep"))
    ap.add_argument("--n", type=int, default=500, help="definitions drawn each way")
    ap.add_argument("--files", type=int, default=300, help="files outlined for rootgrep → ctags")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="rootgrep processes at a time")
    ap.add_argument("--examples", type=int, default=15, help="cases printed per category")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    server = os.path.abspath(args.server)
    spec = LANGS[args.lang]
    started = time.time()

    all_tags, cmd = run_ctags(root, spec)
    ctags_by_file = collections.defaultdict(list)
    for t in all_tags:
        ctags_by_file[t["path"]].append(t)
    defs_ctags = [t for t in all_tags if t["kind"] in spec["ctags_kinds"] and not t["anonymous"]]
    files = language_files(root, spec)

    rng = random.Random(args.seed)
    fwd_sample = rng.sample(defs_ctags, min(args.n, len(defs_ctags)))
    rev_files = rng.sample(files, min(args.files, len(files)))

    needed = sorted({t["path"] for t in fwd_sample} | set(rev_files))
    outlines = outline_all(server, root, needed, args.jobs)

    fwd = forward(root, spec, all_tags, fwd_sample, outlines)
    pool = []
    for rel in sorted(rev_files):
        defs, _ = outlines[rel]
        for d in defs or []:
            if d["kind"] in spec["rootgrep_kinds"]:
                pool.append((rel, d))
    rev_sample = rng.sample(pool, min(args.n, len(pool)))
    rev = reverse(spec, ctags_by_file, rev_sample)

    result = {
        "root": root,
        "lang": args.lang,
        "seed": args.seed,
        "n": args.n,
        "files_drawn": len(rev_files),
        "ctags": ctags_version(),
        "ctags_command": " ".join(cmd),
        "ctags_definitions": len(defs_ctags),
        "language_files": len(files),
        "rootgrep_pool": len(pool),
        "ctags_to_rootgrep": summarize(args.lang, fwd, root, args.examples),
        "rootgrep_to_ctags": summarize(args.lang, rev, root, args.examples),
        "elapsed_s": round(time.time() - started, 1),
    }
    print(f"{root} ({args.lang}): {len(files)} files, {len(defs_ctags)} ctags function/type "
          f"definitions; {len(needed)} files outlined; seed {args.seed}")
    print_direction("ctags → rootgrep", result["ctags_to_rootgrep"])
    print_direction("rootgrep → ctags", result["rootgrep_to_ctags"])
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
