#!/usr/bin/env python3
"""Ranked-search benchmark (PRODUCT §14): scores rankers on code-localization tasks.

  python3 bench/rank_eval.py run TASKS.jsonl TREE [--git GIT_DIR] [--name SET] [--rankers LIST] [--out DIR]
  python3 bench/rank_eval.py table RESULT.json... [--out FILE]
  python3 bench/rank_eval.py variants RESULT.json... [--out FILE.md]   (also writes FILE.json)

TASKS: a file of bench/rank_tasks.sh (build_tasks.py's format: one JSON object a line with
`query`, `query_hard`, `gold` [{path, name, line}] and `files`); TREE: the repository's tree at
the commit the tasks were built against (gold lines are that tree's). Each ranker answers every
task twice, with `query` and with `query_hard` (the subject's `subsystem:` prefix removed), and
is scored on its first 10 results:

  file hit@k   an answer file among the top k files (function rankers: among the files of the
               top k definitions)
  fn hit@k     an answer function among the top k definitions: same path, and the definition's
               line range contains the answer's line or has its name (file rankers: n/a)
  fn hit resolved@k   the same, except for an answer whose name several functions of its file
               have (Rust's `new`, ripgrep's 108 `doc_long`): the definition must be one the
               commit changed, found with --git by the change's text (resolve_gold); without
               --git, or when not found, the one holding the answer's line
  MRR@10       of the first function hit (file rankers: of the first file hit)
  page KiB     bytes of the first page: the top-10 results' text (whole files, or definitions'
               lines); for `mcp`, the JSON-RPC response
  ms/query     wall time of the ranking alone (indexes built beforehand)

Rankers (pure Python, standard library only; `mcp` needs the rootgrep binary):
  bm25-files      BM25 (k1 1.2, b 0.75) over whole source files
  bm25-functions  BM25 over function and method bodies; definitions and their line ranges from
                  `rootgrep`'s outline tool (one server, one call a file), or `--defs ctags`
  grep-route      the query's 3 rarest words (file document frequency; stopwords and words of
                  fewer than 3 letters left out), grepped case-insensitively; files ranked by
                  their total count of matching lines
  mcp             rootgrep's `search` tool over stdio (`{"query", "head_limit": 10}`); skipped,
                  and said so, while the server has no such tool
  bm25-functions+comments   (only when asked for) bm25-functions with each definition's
                  document extended up over the comment block (and Rust attributes) above it

  prototype variants (proto_variants(): fielded:w*, fielded, fielded+file*, ...; see
                  bench/results/rank-proto/DECISIONS.md) BM25F over definitions with fields name,
                  container, path, leading comment and body, a file prior, query processing

Documents: files with a source extension (.c .h .rs .py .go .js .ts .java .cpp .hpp .cc), at most
1 MiB, without a NUL byte in their first 8 KiB; `.git` directories are not walked. Tokens:
identifiers ([A-Za-z_][A-Za-z0-9_]*) split on `_` and case changes, lowercased, plus the whole
identifier lowercased when it splits. Indexes are cached under --cache (a pickle per tree
state; the key is every document's path, size and mtime).

Writes OUT/SET.json (configuration, corpus and coverage counts, metrics, each task's first
hit ranks) and OUT/SET.md (the table).
"""
import argparse
import array
import bisect
import fnmatch
import hashlib
import heapq
import json
import math
import os
import pickle
import platform
import re
import stat
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # importing driver.py leaves no __pycache__ in bench/
SRC_EXT = (".c", ".h", ".rs", ".py", ".go", ".js", ".ts", ".java", ".cpp", ".hpp", ".cc")
MAX_BYTES = 1 << 20
K1, B = 1.2, 0.75
FUNC_KINDS = ("function", "method")
TOP = 10
KS = (1, 5, 10)
CACHE_VERSION = 2
RANKERS = ("bm25-files", "bm25-functions", "grep-route", "mcp", "bm25-functions+comments")
DEFAULT_RANKERS = ("bm25-files", "bm25-functions", "grep-route", "mcp")
FORMS = ("query", "query_hard")
DEFAULT_BIN = os.environ.get("ROOTGREP_BIN") or os.path.join(os.path.dirname(HERE), "target", "release", "rootgrep")

# English function words, and a few words every commit message has; the grep route leaves
# them out (an agent would not grep for "the" or "fix").
STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing done down during each else etc even ever
every few for from further get gets got had has have having he her here hers him his how however
if in into is it its itself just like may me might more most much must my no nor not now of off
on once one only or other our ours out over own same shall she should since so some still such
than that the their theirs them then there these they this those though through thus to too
under until up upon us use used uses using very via was we were what when where whether which
while who whom why will with within without would yet you your
fix fixed fixes fixing add added adds adding remove removed removes issue issues bug bugs
""".split())

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Within an `_`-free chunk: an upper-case run not followed by a lower-case letter (HTTP in
# HTTPServer), a capitalised or lower-case word; digits stay with the letters before them.
PART = re.compile(r"[A-Z]+[0-9]*(?![a-z])|[A-Z]?[a-z]+[0-9]*|[0-9]+")

_expanded = {}


def expand(ident):
    """An identifier's tokens: its parts, lowercased, and itself lowercased when it splits."""
    toks = _expanded.get(ident)
    if toks is None:
        parts = [p.lower() for chunk in ident.split("_") if chunk for p in PART.findall(chunk)]
        whole = ident.lower()
        if parts != [whole]:
            parts.append(whole)
        toks = _expanded[ident] = tuple(parts)
    return toks


def tokenize(text):
    """Token -> count for a text."""
    out = Counter()
    for ident, n in Counter(IDENT.findall(text)).items():
        for tok in expand(ident):
            out[tok] += n
    return out


def query_terms(text):
    return list(dict.fromkeys(tok for ident in IDENT.findall(text) for tok in expand(ident)))


# ---------------------------------------------------------------------------------------------
# BM25


class BM25:
    """Plain BM25 in compressed-sparse-row form: each term's postings are doc ids with their
    precomputed weight idf * tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl)); a query's score
    for a document is the sum of the weights of the (distinct) query terms it contains."""

    def __init__(self):
        self.post = {}      # while building: term -> ([doc], [tf])
        self.dls = []

    def add(self, counts):
        d = len(self.dls)
        self.dls.append(sum(counts.values()))
        post = self.post
        for t, tf in counts.items():
            p = post.get(t)
            if p is None:
                post[t] = p = ([], [])
            p[0].append(d)
            p[1].append(tf)
        return d

    def finish(self, k1=K1, b=B):
        n = len(self.dls)
        avgdl = (sum(self.dls) / n) if n else 1.0
        norm = [k1 * (1 - b + b * dl / avgdl) for dl in self.dls]
        self.terms = sorted(self.post)
        self.offsets = array.array("q", [0])
        self.docs = array.array("i")
        self.weights = array.array("d")
        for t in self.terms:
            ds, tfs = self.post[t]
            df = len(ds)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            self.docs.extend(ds)
            self.weights.extend(idf * tf * (k1 + 1) / (tf + norm[d]) for d, tf in zip(ds, tfs))
            self.offsets.append(len(self.docs))
        self.n, self.avgdl = n, avgdl
        del self.post
        self._lookup()
        return self

    def _lookup(self):
        self.term_id = {t: i for i, t in enumerate(self.terms)}

    def state(self):
        return {k: v for k, v in self.__dict__.items() if k != "term_id"}

    @classmethod
    def from_state(cls, state):
        self = cls.__new__(cls)
        self.__dict__.update(state)
        self._lookup()
        return self

    def df(self, term):
        i = self.term_id.get(term)
        return 0 if i is None else self.offsets[i + 1] - self.offsets[i]

    def postings(self, i):
        s, e = self.offsets[i], self.offsets[i + 1]
        return self.docs[s:e]

    def top(self, terms, k=TOP):
        """The k best documents for distinct query terms: [(doc, score)], score > 0; ties go
        to the lower doc id (documents are numbered in path order, then by line)."""
        scores = [0.0] * self.n
        offsets, docs, weights = self.offsets, self.docs, self.weights
        for t in terms:
            i = self.term_id.get(t)
            if i is None:
                continue
            s, e = offsets[i], offsets[i + 1]
            for d, w in zip(docs[s:e], weights[s:e]):
                scores[d] += w
        best = heapq.nlargest(k, range(self.n), key=scores.__getitem__)
        return [(d, scores[d]) for d in best if scores[d] > 0]


# ---------------------------------------------------------------------------------------------
# The tree: source files, their definitions, cached indexes


def source_files(tree):
    """[(relpath, size, mtime_ns)] of files with a source extension, sorted; .git not walked,
    symlinks not followed."""
    out = []
    for dp, dns, fns in os.walk(tree):
        dns[:] = [d for d in dns if d != ".git"]
        for f in fns:
            if not f.endswith(SRC_EXT):
                continue
            p = os.path.join(dp, f)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out.append((os.path.relpath(p, tree), st.st_size, st.st_mtime_ns))
    out.sort()
    return out


def read_source(path):
    """The file's bytes, or None for a binary file (a NUL byte in its first 8 KiB)."""
    with open(path, "rb") as f:
        data = f.read()
    return None if b"\0" in data[:8192] else data


class Corpus:
    """The tree's documents: files, and function definitions with their line ranges."""

    def __init__(self, tree, cache_dir, defs_source, rootgrep, jobs, log):
        self.tree = os.path.abspath(tree)
        self.cache_dir = cache_dir
        self.defs_source = defs_source
        self.rootgrep = rootgrep
        self.jobs = jobs
        self.log = log
        self.listing = source_files(self.tree)
        h = hashlib.sha1(f"{CACHE_VERSION}\0{self.tree}\0".encode())
        for rel, size, mtime in self.listing:
            h.update(f"{rel}\0{size}\0{mtime}\n".encode())
        self.key = h.hexdigest()[:16]
        self.build_seconds = {}

    def _cached(self, what, build):
        os.makedirs(self.cache_dir, exist_ok=True)
        path = os.path.join(self.cache_dir, f"{os.path.basename(self.tree)}-{self.key}-{what}.pkl")
        # Pickled as plain data (an index as its state dict), so the cache does not depend
        # on whether this file runs as a script or is imported.
        if os.path.exists(path):
            t0 = time.perf_counter()
            with open(path, "rb") as f:
                value = pickle.load(f)
            for k in value.pop("_bm25", ()):
                value[k] = BM25.from_state(value[k])
            self.log(f"{what}: loaded from {path} ({time.perf_counter() - t0:.1f} s)")
            return value
        t0, c0 = time.perf_counter(), time.process_time()
        value = build()
        self.build_seconds[what] = {"wall": round(time.perf_counter() - t0, 2),
                                    "cpu": round(time.process_time() - c0, 2)}
        plain = {k: (v.state() if isinstance(v, BM25) else v) for k, v in value.items()}
        plain["_bm25"] = [k for k, v in value.items() if isinstance(v, BM25)]
        tmp = path + f".tmp{os.getpid()}"
        with open(tmp, "wb") as f:
            pickle.dump(plain, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        self.log(f"{what}: built in {self.build_seconds[what]['wall']} s, cached at {path}")
        return value

    # -- files ---------------------------------------------------------------------------------

    def files(self):
        """{"paths", "sizes", "index": BM25, "skipped": {...}} over the source files."""
        if not hasattr(self, "_files"):
            self._files = self._cached("files", self._build_files)
        return self._files

    def _build_files(self):
        index, paths, sizes = BM25(), [], []
        skipped = Counter()
        for rel, size, _ in self.listing:
            if size > MAX_BYTES:
                skipped["over_1mib"] += 1
                continue
            try:
                data = read_source(os.path.join(self.tree, rel))
            except OSError:
                skipped["unreadable"] += 1
                continue
            if data is None:
                skipped["binary"] += 1
                continue
            index.add(tokenize(data.decode("utf-8", "replace")))
            paths.append(rel)
            sizes.append(len(data))
        return {"paths": paths, "sizes": sizes, "index": index.finish(), "skipped": dict(skipped)}

    # -- definitions ---------------------------------------------------------------------------

    def definitions(self):
        """{path: [(name, kind, line, end_line)]} for every indexed file."""
        if not hasattr(self, "_defs"):
            self._defs = self._cached(f"defs-{self.defs_source}", self._build_defs)
        return self._defs

    def _build_defs(self):
        paths = self.files()["paths"]
        if self.defs_source == "ctags":
            return ctags_definitions(self.tree, paths)
        return rootgrep_definitions(self.rootgrep, self.tree, paths, self.jobs, self.log)

    def functions(self, leading_comments=False):
        """{"docs": [(path, name, line, end_line)], "sizes", "index": BM25} over function and
        method bodies (with leading_comments, each also with the comment block above it)."""
        attr = "_funcs_lc" if leading_comments else "_funcs"
        if not hasattr(self, attr):
            what = f"functions-{self.defs_source}" + ("-comments" if leading_comments else "")
            setattr(self, attr, self._cached(what, lambda: self._build_functions(leading_comments)))
        return getattr(self, attr)

    def _build_functions(self, leading_comments):
        defs = self.definitions()
        index, docs, sizes = BM25(), [], []
        for path in self.files()["paths"]:
            fdefs = sorted(d for d in defs.get("files", {}).get(path, ()) if d[1] in FUNC_KINDS)
            if not fdefs:
                continue
            data = read_source(os.path.join(self.tree, path)) or b""
            lines = data.split(b"\n")
            for name, kind, line, end in sorted(fdefs, key=lambda d: (d[2], d[3], d[0])):
                start = leading_comment_start(lines, line) if leading_comments else line
                seg = b"\n".join(lines[start - 1:end])
                index.add(tokenize(seg.decode("utf-8", "replace")))
                docs.append((path, name, line, end))
                sizes.append(len(seg))
        return {"docs": docs, "sizes": sizes, "index": index.finish()}

    # -- fielded definitions (prototype rankers) ------------------------------------------------

    def fielded(self):
        """{"docs", "sizes", "doc_file", "file_path_tokens", "index": FieldIndex} over the same
        function and method definitions as functions(), each with the fields of FIELDS."""
        if not hasattr(self, "_fielded"):
            self._fielded = self._cached(f"fielded-{self.defs_source}", self._build_fielded)
            fi = self._fielded["index"]
            if isinstance(fi, dict):
                self._fielded["index"] = FieldIndex.from_state(fi)
        return self._fielded

    def _build_fielded(self):
        defs = self.definitions()
        index, docs, sizes, doc_file, ftoks = FieldIndex(), [], [], [], []
        for fno, path in enumerate(self.files()["paths"]):
            ptoks = path_tokens(path)
            segs = path.split("/")
            segs[-1] = os.path.splitext(segs[-1])[0]
            ftoks.append(frozenset(ptoks) | {SEG_CLEAN.sub("", s.lower()) for s in segs})
            alldefs = defs.get("files", {}).get(path, ())
            fdefs = sorted(d for d in alldefs if d[1] in FUNC_KINDS)
            if not fdefs:
                continue
            conts = [d for d in alldefs if d[1] in CONTAINER_KINDS]
            data = read_source(os.path.join(self.tree, path)) or b""
            lines = data.split(b"\n")
            for name, kind, line, end in sorted(fdefs, key=lambda d: (d[2], d[3], d[0])):
                inner = [c for c in conts if c[2] <= line and c[3] >= end]
                cont = min(inner, key=lambda c: (c[3] - c[2], -c[2]))[0] if inner else ""
                cstart = leading_comment_start(lines, line)
                body = b"\n".join(lines[line - 1:end])
                comment = b"\n".join(lines[cstart - 1:line - 1]) if cstart < line else b""
                index.add({"name": tokenize(name), "container": tokenize(cont), "path": ptoks,
                           "comment": tokenize(comment.decode("utf-8", "replace")),
                           "body": tokenize(body.decode("utf-8", "replace"))})
                docs.append((path, name, line, end))
                sizes.append(len(body))
                doc_file.append(fno)
        return {"docs": docs, "sizes": sizes, "doc_file": doc_file, "file_path_tokens": ftoks,
                "index": index.finish().state()}



COMMENT_LINE = (b"///", b"//!", b"//", b"/*", b"*", b"*/", b"#[")


def leading_comment_start(lines, line):
    """The first line of the comment block (and Rust attributes) just above a definition that
    starts at `line` (1-based), blank lines between them allowed; `line` when there is none."""
    above = line - 1                      # lines[above - 1] is the line above the definition
    while above > 0 and not lines[above - 1].strip():
        above -= 1
    if above == 0 or not lines[above - 1].strip().startswith(COMMENT_LINE):
        return line
    while above > 1 and lines[above - 2].strip().startswith(COMMENT_LINE):
        above -= 1
    return above


def rootgrep_definitions(binary, tree, paths, jobs, log):
    """Each file's definitions from rootgrep's outline tool: one stdio server per job, one call a
    file (a directory outline pages by offset, and deep offsets re-walk the tree)."""
    sys.path.insert(0, HERE)
    from driver import cpu_seconds
    if not os.access(binary, os.X_OK):
        raise SystemExit(f"no rootgrep binary at {binary} (--bin, or ROOTGREP_BIN; or --defs ctags)")

    out, problems, lock = {}, Counter(), threading.Lock()
    server_cpu = [0.0] * jobs
    chunks = [paths[i::jobs] for i in range(jobs)]
    done = [0]

    def work(j):
        server = quiet_server([binary, "--no-watch", "--no-cache", "--max-output-bytes", "100000000", tree],
                              [tree], 120)
        server.initialize()
        try:
            for rel in chunks[j]:
                defs, offset = [], 0
                while True:
                    args = {"path": rel, "head_limit": 5000}
                    if offset:
                        args["offset"] = offset
                    _, msg, _ = server.request("tools/call", {"name": "outline", "arguments": args})
                    result = msg.get("result") or {}
                    sc = result.get("structuredContent")
                    if "error" in msg or result.get("isError") or sc is None:
                        with lock:
                            problems["outline_error"] += 1
                        break
                    for f in sc.get("files", ()):
                        for d in f.get("definitions", ()):
                            defs.append((d["name"], d["kind"], d["line"], d.get("end_line", d["line"])))
                    offset = sc.get("next_offset")
                    if not offset:
                        break
                with lock:
                    out[rel] = defs
                    done[0] += 1
                    if done[0] % 2000 == 0:
                        log(f"outline: {done[0]}/{len(paths)} files")
        finally:
            server_cpu[j] = cpu_seconds(server.proc.pid)
            server.close()

    threads = [threading.Thread(target=work, args=(j,)) for j in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if len(out) != len(paths):
        raise RuntimeError(f"outline answered for {len(out)} of {len(paths)} files")
    return {"files": out, "problems": dict(problems), "server_cpu_s": round(sum(server_cpu), 2),
            "source": f"rootgrep outline ({binary})"}


def ctags_definitions(tree, paths):
    """Each file's definitions from Universal Ctags (JSON output, `end` field). A tag without an
    end line (ctags' Rust parser gives few) ends where the file's next tag starts."""
    out = {p: [] for p in paths}
    lists = "\n".join(paths) + "\n"
    proc = subprocess.run(["ctags", "--output-format=json", "--fields=+neK", "--sort=no", "-L", "-", "-f", "-"],
                          input=lists, capture_output=True, text=True, cwd=tree, errors="replace")
    raw = {}
    for line in proc.stdout.splitlines():
        try:
            t = json.loads(line)
        except ValueError:
            continue
        if t.get("_type") == "tag" and "line" in t:
            raw.setdefault(t["path"], []).append((t["name"], t.get("kind", ""), t["line"], t.get("end")))
    for path, tags in raw.items():
        if path not in out:
            continue
        tags.sort(key=lambda t: t[2])
        starts = sorted({t[2] for t in tags})
        for name, kind, line, end in tags:
            if end is None:
                i = bisect.bisect_right(starts, line)
                end = starts[i] - 1 if i < len(starts) else 1 << 30
            out[path].append((name, kind, line, max(end, line)))
    return {"files": out, "problems": {}, "source": "universal-ctags"}


# ---------------------------------------------------------------------------------------------
# Rankers: each returns a callable query -> (items, page_bytes); an item is a path (file
# rankers) or (path, name, line, end_line) (definition rankers).


class Skip(Exception):
    pass


def quiet_server(command, roots, timeout):
    """driver.Server whose reader thread does not fail when the server asks something (e.g.
    roots/list) after we closed its stdin."""
    sys.path.insert(0, HERE)
    from driver import Server

    class Quiet(Server):
        def send(self, message):
            try:
                super().send(message)
            except (ValueError, BrokenPipeError):
                if not getattr(self, "closing", False):
                    raise

        def close(self):
            self.closing = True
            super().close()
    return Quiet(command, roots, timeout)


def bm25_files(corpus):
    fi = corpus.files()
    paths, sizes, index = fi["paths"], fi["sizes"], fi["index"]

    def rank(q):
        top = index.top(query_terms(q))
        return [paths[d] for d, _ in top], sum(sizes[d] for d, _ in top)
    return rank, "files"


def bm25_functions(corpus, leading_comments=False):
    fx = corpus.functions(leading_comments)
    docs, sizes, index = fx["docs"], fx["sizes"], fx["index"]

    def rank(q):
        top = index.top(query_terms(q))
        return [docs[d] for d, _ in top], sum(sizes[d] for d, _ in top)
    return rank, "definitions"


# ---------------------------------------------------------------------------------------------
# Prototype rankers (bench/results/rank-proto): BM25F over definitions with fields, a file
# prior, and query processing. Each is a named variant (PROTO_VARIANTS); all are computed from
# one cached fielded index of the function and method definitions (the same documents, in the
# same order, as bm25-functions).

FIELDS = ("name", "container", "path", "comment", "body")
# Definitions that can contain a function: its container is the innermost one whose range
# holds the function's (Rust impl/trait/mod, C++ class/struct...).
CONTAINER_KINDS = ("impl", "trait", "module", "class", "struct", "enum", "union", "interface", "namespace")
# Per-field BM25F length normalisation (b); k1 as plain BM25.
FIELD_B = {"name": 0.5, "container": 0.5, "path": 0.5, "comment": 0.75, "body": 0.75}

# The query-processing stopword list: STOPWORDS (above) plus words of commit messages.
QUERY_STOPWORDS = STOPWORDS | frozenset("""
fix fixed fixes fixing add added adds adding remove removed removes removing issue issues bug bugs
change changed changes changing update updated updates updating make makes made making commit
commits patch patches case cases instead need needs needed now also again already always never
correct correctly properly proper wrong missing broken break breaks problem problems cause caused
causes result results happen happens happened work works working avoid resolve resolved resolves
closes close fixes ref see e g i ie eg it's don't doesn't isn't can't won't didn't there's let's
""".replace("'", " ").split())

# Only the English function words of STOPWORDS (its last two lines are commit-message words).
ENGLISH_STOPWORDS = STOPWORDS - frozenset("""
fix fixed fixes fixing add added adds adding remove removed removes issue issues bug bugs
""".split())

SEG_CLEAN = re.compile(r"[^a-z0-9]")


def path_tokens(rel):
    """The path field's tokens of a file: each directory segment and the file's stem (its name
    without the last extension), as identifier tokens (expand), plus the segment lowercased with
    every non-alphanumeric character removed when that differs (`risc-v` -> risc, v, riscv)."""
    segs = rel.split("/")
    segs[-1] = os.path.splitext(segs[-1])[0]
    out = Counter()
    for seg in segs:
        toks = [t for ident in IDENT.findall(seg) for t in expand(ident)]
        out.update(toks)
        clean = SEG_CLEAN.sub("", seg.lower())
        if clean and clean not in toks:
            out[clean] += 1
    return out


class FieldIndex:
    """Per-field postings (raw term frequencies) and field lengths over the definitions; scored
    by BM25F: tf~ = sum_f w_f tf_f / (1 - b_f + b_f len_f / avglen_f), weight = idf tf~ (k1 + 1) /
    (k1 + tf~), idf Lucene's over the documents that have the term in a field of weight > 0."""

    def __init__(self):
        self.post = {f: {} for f in FIELDS}
        self.dl = {f: [] for f in FIELDS}
        self.n = 0

    def add(self, fields):
        d = self.n
        self.n += 1
        for f in FIELDS:
            counts = fields.get(f) or {}
            self.dl[f].append(sum(counts.values()))
            post = self.post[f]
            for t, tf in counts.items():
                p = post.get(t)
                if p is None:
                    post[t] = p = (array.array("i"), array.array("i"))
                p[0].append(d)
                p[1].append(tf)
        return d

    def finish(self):
        self.avg = {f: (sum(self.dl[f]) / self.n if self.n else 1.0) or 1.0 for f in FIELDS}
        return self

    def state(self):
        return dict(self.__dict__)

    @classmethod
    def from_state(cls, state):
        self = cls.__new__(cls)
        self.__dict__.update(state)
        return self


class FieldedScorer:
    """Per-term BM25F weights for one field-weight setting, computed once a term and cached."""

    def __init__(self, fi, weights, bs=FIELD_B, k1=K1):
        self.fi, self.weights, self.k1 = fi, weights, k1
        self.norm = {f: [1 - bs[f] + bs[f] * dl / fi.avg[f] for dl in fi.dl[f]]
                     for f in FIELDS if weights.get(f)}
        self.cache = {}
        self.scores = {}   # query terms -> every document's score (shared by variants; the
                           # evaluation's cost, not the ranker's)

    def postings(self, t):
        p = self.cache.get(t)
        if p is not None:
            return p
        acc = {}
        for f, norm in self.norm.items():
            e = self.fi.post[f].get(t)
            if e is None:
                continue
            w = self.weights[f]
            for d, tf in zip(*e):
                acc[d] = acc.get(d, 0.0) + w * tf / norm[d]
        n, df = self.fi.n, len(acc)   # documents with the term in a field of weight > 0
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        k1 = self.k1
        ds = sorted(acc)
        p = self.cache[t] = (ds, [idf * acc[d] * (k1 + 1) / (k1 + acc[d]) for d in ds])
        return p


CODE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:::|\.|->)[A-Za-z_][A-Za-z0-9_]*)*(\s*\(\s*\))?")
PATH_LIKE = re.compile(r"(?<![\w/.-])((?:[\w.{}|-]+/)+[\w.{}|-]+|[\w-]+\.(?:c|h|rs|py|go|js|ts|java|cpp|hpp|cc|S))(?![\w/])")
PREFIX = re.compile(r"^\s*([A-Za-z0-9_./{}|,+-]+(?:\s*,\s*[A-Za-z0-9_./{}|+-]+)*)\s*:\s")


def is_code_word(ident, call=False):
    """A word written as code: with an inner `_` (CONFIG_FOO, sys_call6), a lower-to-upper case
    change (camelCase, HashMap), or followed by `()`."""
    core = ident.strip("_")
    return call or "_" in core or bool(re.search(r"[a-z][A-Z]", core))


def hint_segments(text):
    """Path hint segments of a `subsystem:` prefix or a path-like word: split on `/`, `,`, `{`, `|`,
    `}` and blanks, lowercased, non-alphanumerics removed; empty ones dropped."""
    out = []
    for seg in re.split(r"[/,{}|\s]+", text):
        seg = os.path.splitext(seg)[0] if re.search(r"\.(c|h|rs|py|go|js|ts|java|cpp|hpp|cc|S)$", seg) else seg
        clean = SEG_CLEAN.sub("", seg.lower())
        if clean:
            out.append(clean)
    return list(dict.fromkeys(out))


def query_plan(q, cfg):
    """{term: query weight} and the path hint segments for a query under a variant's config."""
    stop, code, parts_w = cfg.get("stop"), cfg.get("code", 1.0), cfg.get("code_parts", 1.0)
    stoplist = ENGLISH_STOPWORDS if stop == "english" else QUERY_STOPWORDS
    terms = {}
    for m in CODE_WORD.finditer(q):
        call = bool(m.group(1))
        for ident in IDENT.findall(m.group(0)):
            toks = expand(ident)
            if stop and len(toks) == 1 and (toks[0] in stoplist or len(toks[0]) < 2):
                continue
            codey = code != 1.0 and is_code_word(ident, call)
            for i, tok in enumerate(toks):
                whole = i == len(toks) - 1
                w = (code if whole else parts_w) if codey else 1.0
                if w > terms.get(tok, 0.0):
                    terms[tok] = w
    hints = []
    if cfg.get("hint"):
        m = PREFIX.match(q.split("\n", 1)[0] + " ")
        if m and " " not in m.group(1).strip():
            hints += hint_segments(m.group(1))
    if cfg.get("path_words"):
        for m in PATH_LIKE.finditer(q):
            hints += hint_segments(m.group(1))
    return terms, list(dict.fromkeys(hints))


def proto_variants():
    """name -> config. `w`: field weights (name, container, path, comment, body)."""
    grid = {
        "w0": (0, 0, 0, 0, 1),          # body only: must equal bm25-functions
        "w1": (1, 1, 1, 1, 1),
        "w2": (3, 1, 1.5, 1.5, 1),
        "w3": (2, 1, 1, 1, 1),
        "w4": (3, 1, 1, 1, 1),
        "w5": (5, 2, 1.5, 1.5, 1),
        "w6": (3, 1, 0.5, 1.5, 1),
        "w7": (3, 1, 3, 1.5, 1),
        "w8": (3, 1, 1.5, 0.5, 1),
        "w9": (3, 1, 1.5, 3, 1),
        "w10": (3, 2, 1.5, 1.5, 1),
        "w11": (3, 1, 1.5, 1.5, 0.5),
    }
    v = {}
    for k, w in grid.items():
        v[f"fielded:{k}"] = {"w": dict(zip(FIELDS, w))}
    best = grid[PROTO_BEST_W]
    base = {"w": dict(zip(FIELDS, best))}
    v["fielded"] = dict(base)
    for f in FIELDS[:4]:   # leave one field out of the chosen setting
        v[f"fielded-no-{f}"] = {"w": {**base["w"], f: 0}}
    for a in (0.3, 0.5, 1.0):
        v[f"fielded+file:a{a}"] = {**base, "file": a}
    v["fielded+file"] = {**base, "file": PROTO_BEST_ALPHA}
    fb = v["fielded+file"]
    # query processing, each alone on fielded+file, then together
    v["fielded+file+stop"] = {**fb, "stop": True}
    v["fielded+file+stop:english"] = {**fb, "stop": "english"}
    for beta in (0.25, 0.5, 1.0):
        v[f"fielded+file+hint:b{beta}"] = {**fb, "hint": beta}
    for g in (2.0, 3.0):
        v[f"fielded+file+code:g{g}"] = {**fb, "code": g}
    v["fielded+file+code:g2.0,parts0.5"] = {**fb, "code": 2.0, "code_parts": 0.5}
    v["fielded+file+pathwords"] = {**fb, "path_words": True, "hint": PROTO_BEST_BETA}
    # other cheap things
    v["fielded+file+namebonus"] = {**fb, "name_bonus": 0.5}
    v["fielded+file+longnorm"] = {**fb, "body_b": 0.9}
    v["fielded+file+shortpen"] = {**fb, "short_pen": 3}
    # combined: the recommendation (what helped), without the file prior, and everything
    v["fielded+file+hint+code"] = {**fb, "hint": PROTO_BEST_BETA, "code": PROTO_BEST_GAMMA}
    v["fielded+hint+code"] = {**v["fielded+file+hint+code"], "file": 0}
    v["proto-all"] = {**fb, "stop": True, "hint": PROTO_BEST_BETA, "code": PROTO_BEST_GAMMA,
                      "path_words": True}
    v["proto-all-no-file"] = {**v["proto-all"], "file": 0}
    # query processing on plain bm25-functions (w0) too, to see what is due to the fields
    v["fielded:w0+stop+code"] = {"w": dict(zip(FIELDS, grid["w0"])), "stop": True, "code": PROTO_BEST_GAMMA}
    return v


# A run caches up to this many queries' scores per field setting (and file scores): variants
# that differ only after the sum (file prior, hints, bonuses) reuse them.
SCORE_CACHE = 3000

PROTO_BEST_W = "w10"
PROTO_BEST_ALPHA = 0.3
PROTO_BEST_BETA = 0.5
PROTO_BEST_GAMMA = 2.0


def fielded_ranker(corpus, cfg, scorers):
    fx = corpus.fielded()
    fi, docs, sizes, doc_file = fx["index"], fx["docs"], fx["sizes"], fx["doc_file"]
    bs = dict(FIELD_B)
    if cfg.get("body_b") is not None:
        bs["body"] = cfg["body_b"]
    key = (tuple(sorted(cfg["w"].items())), tuple(sorted(bs.items())))
    if key not in scorers:
        scorers[key] = FieldedScorer(fi, cfg["w"], bs)
    scorer = scorers[key]
    files = corpus.files()
    findex, fpaths = files["index"], files["paths"]
    ftoks = fx["file_path_tokens"]
    file_scores = scorers.setdefault("file-scores", {})
    names = [expand(d[1])[-1] if d[1] else "" for d in docs]
    n = fi.n

    def rank(q):
        terms, hints = query_plan(q, cfg)
        tkey = tuple(sorted(terms.items()))
        hit = scorer.scores.get(tkey)
        if hit is None:
            scores = [0.0] * n
            for t, qw in terms.items():
                ds, ws = scorer.postings(t)
                if qw == 1.0:
                    for d, w in zip(ds, ws):
                        scores[d] += w
                else:
                    for d, w in zip(ds, ws):
                        scores[d] += qw * w
            if len(scorer.scores) < SCORE_CACHE:
                scorer.scores[tkey] = array.array("d", scores)
        else:
            scores = hit.tolist()
        touched = [d for d in range(n) if scores[d] > 0]
        if not touched:
            return [], 0
        if cfg.get("short_pen"):
            # definitions of fewer than short_pen lines (stubs, one-line wrappers) count half
            sp = cfg["short_pen"]
            for d in touched:
                if docs[d][3] - docs[d][2] + 1 < sp:
                    scores[d] *= 0.5
        alpha = cfg.get("file", 0)
        if alpha:
            fs = file_scores.get(tkey)
            if fs is None:
                fs = [0.0] * findex.n
                offsets, fdocs, fweights = findex.offsets, findex.docs, findex.weights
                for t, qw in terms.items():
                    i = findex.term_id.get(t)
                    if i is None:
                        continue
                    s, e = offsets[i], offsets[i + 1]
                    for d, w in zip(fdocs[s:e], fweights[s:e]):
                        fs[d] += qw * w
                fs = (fs, max(fs) or 1.0)
                if len(file_scores) < SCORE_CACHE:
                    file_scores[tkey] = fs
            fs, maxf = fs
            maxd = max(scores[d] for d in touched)
            for d in touched:
                scores[d] = scores[d] / maxd + alpha * fs[doc_file[d]] / maxf
        beta = cfg.get("hint", 0)
        if beta and hints:
            frac = {}
            for d in touched:
                f = doc_file[d]
                x = frac.get(f)
                if x is None:
                    pt = ftoks[f]
                    x = frac[f] = sum(1 for h in hints if h in pt) / len(hints)
                if x:
                    scores[d] *= 1 + beta * x
        nb = cfg.get("name_bonus")
        if nb:
            qwords = {ident.lower() for ident in IDENT.findall(q)}
            for d in touched:
                if names[d] in qwords:
                    scores[d] *= 1 + nb
        best = heapq.nlargest(TOP, touched, key=scores.__getitem__)
        return [docs[d] for d in best], sum(sizes[d] for d in best)
    return rank, "definitions"


def grep_words(query, index, n=3):
    """The query's n rarest words by file document frequency (words of 3+ characters, not
    stopwords, found in at least one file); ties keep the query's order."""
    seen, words = set(), []
    for pos, w in enumerate(IDENT.findall(query)):
        lw = w.lower()
        if len(lw) < 3 or lw in STOPWORDS or lw in seen:
            continue
        seen.add(lw)
        df = index.df(lw)
        if df:
            words.append((df, pos, lw))
    return [w for _, _, w in sorted(words)[:n]]


def grep_route(corpus):
    fi = corpus.files()
    paths, sizes, index = fi["paths"], fi["sizes"], fi["index"]
    # Every occurrence of a word (it starts with a letter or `_`) lies inside one identifier
    # of the text, and every identifier is a token (lowercased): the files a case-insensitive
    # grep for the word matches are those holding a token that contains it.
    vocab = "\n" + "\n".join(index.terms) + "\n"
    starts = []
    pos = 0
    for t in index.terms:
        starts.append(pos + 1)
        pos += len(t) + 1

    def candidates(w):
        files = set()
        i = vocab.find(w)
        while i != -1:
            ti = bisect.bisect_right(starts, i) - 1
            files.update(index.postings(ti))
            i = vocab.find(w, starts[ti] + len(index.terms[ti]))
        return files

    def matching_lines(text, w):
        """Lines of text (lowercased) containing w: what `grep -i -c` counts."""
        n, i = 0, text.find(w)
        while i != -1:
            n += 1
            nl = text.find("\n", i)
            if nl == -1:
                break
            i = text.find(w, nl + 1)
        return n

    def rank(q):
        wanted = {}
        for w in grep_words(q, index):
            for d in candidates(w):
                wanted.setdefault(d, []).append(w)
        counts = Counter()
        for d, words in wanted.items():
            with open(os.path.join(corpus.tree, paths[d]), "rb") as f:
                text = f.read().decode("utf-8", "replace").lower()
            n = sum(matching_lines(text, w) for w in words)
            if n:
                counts[d] = n
        best = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]
        return [paths[d] for d, _ in best], sum(sizes[d] for d, _ in best)
    return rank, "files"


def mcp_arguments(rname):
    """`mcp+kind=function,language=c`: extra `search` arguments (values as JSON when they
    parse, else strings), to rank a filtered variant beside the default."""
    extra = {}
    for pair in rname.partition("+")[2].split(","):
        if "=" in pair:
            key, value = pair.split("=", 1)
            try:
                extra[key] = json.loads(value)
            except ValueError:
                extra[key] = value
    return extra


def mcp_search(corpus, binary, wait_s, log, extra=None):
    sys.path.insert(0, HERE)
    from driver import answer_text
    if not os.path.exists(binary):
        raise Skip(f"no rootgrep binary at {binary}")
    store = os.path.join(corpus.cache_dir, "rootgrep-store")
    os.makedirs(store, mode=0o700, exist_ok=True)
    server = quiet_server([binary, "--cache-dir", store, corpus.tree], [corpus.tree], 120)
    server.initialize()
    _, msg, _ = server.request("tools/list", {})
    names = [t.get("name") for t in (msg.get("result") or {}).get("tools", [])]
    if "search" not in names:
        server.close()
        raise Skip("tool search not found")
    # Warm: wait until list_roots says the root's indexes are built.
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < wait_s:
        _, msg, _ = server.request("tools/call", {"name": "list_roots", "arguments": {}})
        text = answer_text(msg)
        states = re.findall(r"index: (\w+)", text)
        building = re.search(r"\b(building|waiting|re-syncing)\b", text)
        if states and all(s == "fresh" for s in states) and not building:
            break
        time.sleep(0.2)
    log(f"mcp: server ready after {time.perf_counter() - t0:.1f} s")
    root = corpus.tree + os.sep

    def rank(q):
        arguments = {"query": q, "head_limit": TOP, **(extra or {})}
        _, msg, size = server.request("tools/call", {"name": "search", "arguments": arguments})
        result = msg.get("result") or {}
        if "error" in msg or result.get("isError"):
            raise RuntimeError(f"search failed: {json.dumps(msg)[:300]}")
        items = []
        sc = result.get("structuredContent") or {}
        # Results come grouped by file (`files[].results[]`), paths relative to `root` when
        # there is one root.
        for f in sc.get("files", []):
            path = f.get("path", "")
            if path.startswith("file://"):
                path = path[len("file://"):]
            if sc.get("root") and not os.path.isabs(path):
                path = os.path.join(sc["root"], path)
            if path.startswith(root):
                path = path[len(root):]
            for r in f.get("results", []):
                line = r.get("line") or 0
                items.append((path, r.get("name") or "", line, r.get("end_line") or line))
        return items[:TOP], size
    rank.close = server.close
    return rank, "definitions"


# ---------------------------------------------------------------------------------------------
# Scoring


def fn_match(item, gold, strict=False):
    """Same path, and the answer's line in the definition's range or (unless strict) its name."""
    path, name, line, end = item
    return any(g["path"] == path and (line <= g["line"] <= end or (not strict and g["name"] == name))
               for g in gold)


def fn_match_resolved(item, gold):
    """fn_match, except for an answer whose name several definitions of its file have: there the
    definition must contain one of the lines the commit's change is found at (`resolved`), or,
    when the change was not found, the answer's line."""
    path, name, line, end = item
    for g in gold:
        if g["path"] != path:
            continue
        if not g.get("ambiguous"):
            if line <= g["line"] <= end or g["name"] == name:
                return True
        elif g.get("resolved"):
            if any(line <= r <= end for r in g["resolved"]):
                return True
        elif line <= g["line"] <= end:
            return True
    return False


def resolve_gold(tasks, corpus, gitdir, log):
    """Marks each answer whose name more than one function of its file has at the tree's commit
    (`ambiguous`; build_tasks.py keeps one line for a name, whichever its tags file lists first)
    and, with the repository at hand, finds which of them the commit changed: its hunks'
    post-image lines (changed lines and 3 around them) that are distinctive (8+ characters with
    a letter, once in the commit's file and once in the tree's) are looked up in the tree's file;
    `resolved` lists the lines of the same-name definitions that hold one."""
    by = {}
    for path, name, line, end in corpus.functions()["docs"]:
        by.setdefault((path, name), []).append((line, end))
    stats = Counter()
    for t in tasks:
        for g in t["gold"]:
            cands = by.get((g["path"], g["name"]), [])
            g["ambiguous"] = len(cands) > 1
            if g["ambiguous"]:
                stats["ambiguous"] += 1
                g["resolved"] = []
            if not gitdir:
                continue
            # For every answer, as a check on the labels: is the change's text found at HEAD,
            # and inside a function of the answer's name?
            found = anchor_lines(gitdir, t["sha"], g["path"], os.path.join(corpus.tree, g["path"]))
            inside = sorted({line for line, end in cands if any(line <= x <= end for x in found)})
            stats["change_found_at_head"] += bool(found)
            stats["change_inside_answer"] += bool(inside)
            if g["ambiguous"]:
                g["resolved"] = inside
                stats["resolved" if inside else "unresolved"] += 1
    log(f"answers: {dict(stats)}")
    return dict(stats)


def anchor_lines(gitdir, sha, path, head_file):
    """Lines of head_file (1-based) holding the distinctive post-image lines of sha's hunks in
    path."""
    def git(*args):
        return subprocess.run(["git", "--git-dir", gitdir, *args], capture_output=True,
                              text=True, errors="replace").stdout
    post = git("show", f"{sha}:{path}").split("\n")
    diff = git("show", "--format=", "-U0", "--no-color", sha, "--", path)
    wanted = set()
    for m in re.finditer(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", diff, re.M):
        start, count = int(m.group(1)), int(m.group(2) or 1)
        wanted.update(range(max(1, start - 3), start + count + 3))
    post_count = Counter(l.strip() for l in post)
    texts = {post[i - 1].strip() for i in wanted if i <= len(post)}
    texts = {x for x in texts if len(x) >= 8 and re.search(r"[A-Za-z]", x) and post_count[x] == 1}
    with open(head_file, "rb") as f:
        head = f.read().decode("utf-8", "replace").split("\n")
    head_count = Counter(l.strip() for l in head)
    return [i for i, l in enumerate(head, 1) if l.strip() in texts and head_count[l.strip()] == 1]


def first_ranks(task, items, shape):
    """First ranks (1..TOP, or None) of a file hit, a function hit, a strict function hit (line
    range only) and a resolved function hit (fn_match_resolved)."""
    files = set(task["files"])
    file_rank = fn_rank = strict_rank = resolved_rank = None
    for i, it in enumerate(items[:TOP], 1):
        path = it if shape == "files" else it[0]
        if file_rank is None and path in files:
            file_rank = i
        if shape == "definitions":
            if fn_rank is None and fn_match(it, task["gold"]):
                fn_rank = i
            if strict_rank is None and fn_match(it, task["gold"], strict=True):
                strict_rank = i
            if resolved_rank is None and fn_match_resolved(it, task["gold"]):
                resolved_rank = i
    return file_rank, fn_rank, strict_rank, resolved_rank


def summarize(rows, shape):
    n = len(rows)
    out = {"tasks": n}
    for k in KS:
        out[f"file_hit@{k}"] = sum(1 for r in rows if r["file_rank"] and r["file_rank"] <= k) / n
        out[f"fn_hit@{k}"] = (sum(1 for r in rows if r["fn_rank"] and r["fn_rank"] <= k) / n
                              if shape == "definitions" else None)
    out["file_mrr@10"] = sum(1 / r["file_rank"] for r in rows if r["file_rank"]) / n
    out["fn_mrr@10"] = (sum(1 / r["fn_rank"] for r in rows if r["fn_rank"]) / n
                        if shape == "definitions" else None)
    out["mrr@10"] = out["fn_mrr@10"] if shape == "definitions" else out["file_mrr@10"]
    for k in KS:
        out[f"fn_hit_resolved@{k}"] = (sum(1 for r in rows if r["resolved_rank"] and r["resolved_rank"] <= k) / n
                                       if shape == "definitions" else None)
    out["fn_hit_strict@5"] = (sum(1 for r in rows if r["strict_rank"] and r["strict_rank"] <= 5) / n
                              if shape == "definitions" else None)
    out["page_bytes_mean"] = statistics.mean(r["page_bytes"] for r in rows)
    times = [r["ms"] for r in rows]
    out["ms_mean"] = statistics.mean(times)
    out["ms_p50"] = statistics.median(times)
    out["ms_max"] = max(times)
    # The same, for tasks whose query does / does not name an answer function.
    for label, sel in (("names_gold", True), ("no_name", False)):
        sub = [r for r in rows if r["names_gold"] == sel]
        if sub and shape == "definitions":
            out[f"fn_hit@5_{label}"] = sum(1 for r in sub if r["fn_rank"] and r["fn_rank"] <= 5) / len(sub)
        elif sub:
            out[f"file_hit@5_{label}"] = sum(1 for r in sub if r["file_rank"] and r["file_rank"] <= 5) / len(sub)
    return out


def coverage(tasks, corpus, need_functions):
    """How many answers the tree's documents can reach at all."""
    paths = set(corpus.files()["paths"])
    cov = {"tasks": len(tasks), "names_gold": sum(1 for t in tasks if t.get("names_gold")),
           "gold_functions": sum(len(t["gold"]) for t in tasks),
           "tasks_all_files_indexed": sum(1 for t in tasks if all(f in paths for f in t["files"]))}
    # Identifiers the query names (words with `_`, e.g. a renamed macro) that no indexed file
    # has at the tree's commit.
    index = corpus.files()["index"]
    gone = [t for t in tasks
            if any("_" in w.strip("_") and not index.df(w.lower()) for w in IDENT.findall(t["query"]))]
    cov["tasks_naming_an_identifier_gone_at_head"] = len(gone)
    if need_functions:
        docs = corpus.functions()["docs"]
        by_path = {}
        for d in docs:
            by_path.setdefault(d[0], []).append(d)
        reach = amb = 0
        tasks_reach = 0
        for t in tasks:
            any_hit = False
            for g in t["gold"]:
                cands = by_path.get(g["path"], [])
                if any(fn_match(d, [g]) for d in cands):
                    reach += 1
                    any_hit = True
                if sum(1 for d in cands if d[1] == g["name"]) > 1:
                    amb += 1
            tasks_reach += any_hit
        cov.update({"gold_functions_with_a_document": reach, "tasks_with_a_gold_document": tasks_reach,
                    "gold_names_defined_twice_or_more_in_their_file": amb,
                    "function_documents": len(docs)})
    return cov


def tree_commit(tree):
    try:
        r = subprocess.run(["git", "-C", tree, "rev-parse", "HEAD"], capture_output=True, text=True)
        return r.stdout.strip() or None
    except OSError:
        return None


def pct(x):
    return "n/a" if x is None else f"{100 * x:.1f}"


TABLE_HEAD = ("| set | query | ranker | file@1 | file@5 | file@10 | fn@1 | fn@5 | fn@10 | fn@5 resolved | MRR@10 | page KiB | ms/query (p50) |\n"
              "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")


def table_rows(result):
    lines = []
    for form in FORMS:
        for name, r in result["rankers"].items():
            if r["status"] != "ok":
                lines.append(f"| {result['set']} | {form} | {name} | {r['status']} ||||||||||\n")
                continue
            m = r["forms"][form]
            lines.append(
                f"| {result['set']} | {form} | {name} | {pct(m['file_hit@1'])} | {pct(m['file_hit@5'])} | "
                f"{pct(m['file_hit@10'])} | {pct(m['fn_hit@1'])} | {pct(m['fn_hit@5'])} | {pct(m['fn_hit@10'])} | "
                f"{pct(m.get('fn_hit_resolved@5'))} | "
                f"{m['mrr@10']:.3f} | {m['page_bytes_mean'] / 1024:.1f} | {m['ms_p50']:.1f} |\n")
    return lines


def markdown(result):
    cov = result["coverage"]
    s = [f"# Ranked-search baseline: {result['set']}\n\n",
         f"{cov['tasks']} tasks from `{result['tasks_file']}`, tree `{result['tree']}`"
         + (f" at {result['tree_commit']}" if result.get("tree_commit") else "") + ".\n",
         "Hits in %; MRR@10 of the first function hit (file rankers: file hit); page = the first page's "
         "bytes (top-10 files or definitions; mcp: the response).\n\n", TABLE_HEAD]
    s += table_rows(result)
    s.append("\nCorpus: " + ", ".join(f"{k} {v}" for k, v in result["corpus"].items()) + ".\n")
    s.append("Coverage: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in cov.items()) + ".\n")
    return "".join(s)


def score_ranker(rname, rank, shape, tasks, entry, per_task):
    for form in FORMS:
        rows = []
        for t in tasks:
            q = t[form]
            s = time.perf_counter()
            items, page = rank(q)
            ms = (time.perf_counter() - s) * 1000
            fr, gr, sr, rr = first_ranks(t, items, shape)
            rows.append({"sha": t["sha"], "file_rank": fr, "fn_rank": gr, "strict_rank": sr,
                         "resolved_rank": rr, "page_bytes": page, "ms": ms,
                         "names_gold": bool(t.get("names_gold"))})
            per_task.append({"sha": t["sha"], "ranker": rname, "form": form, "file_rank": fr,
                             "fn_rank": gr, "fn_rank_strict": sr, "fn_rank_resolved": rr, "ms": round(ms, 2)})
        entry["forms"][form] = summarize(rows, shape)


def cmd_run(a):
    log = (lambda m: None) if a.quiet else (lambda m: print(f"[{time.strftime('%H:%M:%S')}] {m}", file=sys.stderr, flush=True))
    tasks = [json.loads(l) for l in open(a.tasks) if l.strip()]
    if a.limit:
        tasks = tasks[:a.limit]
    name = a.name or os.path.splitext(os.path.basename(a.tasks))[0]
    variants = proto_variants()
    known = list(RANKERS) + list(variants)
    wanted = []
    for r in (r.strip() for r in a.rankers.split(";" if ";" in a.rankers else ",")):
        if not r:
            continue
        hits = [k for k in known if fnmatch.fnmatchcase(k, r)] if any(c in r for c in "*?[") else [r]
        for h in hits:
            if h not in known and not h.startswith("mcp+"):
                sys.exit(f"unknown ranker {h!r} (known: {', '.join(known)})")
            if h not in wanted:
                wanted.append(h)
    c0, t0 = time.process_time(), time.perf_counter()
    corpus = Corpus(a.tree, a.cache, a.defs, a.bin, a.jobs, log)
    log(f"{name}: {len(tasks)} tasks, {len(corpus.listing)} source files under {corpus.tree}")
    fi = corpus.files()
    result = {"set": name, "tasks_file": os.path.relpath(a.tasks), "tree": a.tree_label or a.tree,
              "tree_commit": tree_commit(corpus.tree),
              "config": {"k1": K1, "b": B, "extensions": list(SRC_EXT), "max_file_bytes": MAX_BYTES,
                         "function_kinds": list(FUNC_KINDS), "definitions": a.defs, "top": TOP,
                         "grep_words": 3, "python": platform.python_version()},
              "corpus": {"source_files": len(corpus.listing), "indexed_files": len(fi["paths"]),
                         **{f"skipped_{k}": v for k, v in fi["skipped"].items()},
                         "file_terms": len(fi["index"].terms)},
              "rankers": {}, "per_task": []}
    need_functions = any(r.startswith("bm25-functions") or r in variants for r in wanted)
    if need_functions:
        defs = corpus.definitions()
        fx = corpus.functions()
        result["corpus"].update({"definitions": sum(len(v) for v in defs["files"].values()),
                                 "function_documents": len(fx["docs"]),
                                 "function_terms": len(fx["index"].terms)})
        if "server_cpu_s" in defs:
            result["corpus"]["outline_server_cpu_s"] = defs["server_cpu_s"]
        if defs.get("problems"):
            result["corpus"]["definition_problems"] = defs["problems"]
    result["coverage"] = coverage(tasks, corpus, need_functions)
    if need_functions:
        result["coverage"]["gold_checks"] = resolve_gold(tasks, corpus, a.git, log)
        result["gold_resolved"] = [{"sha": t["sha"], "path": g["path"], "name": g["name"], "line": g["line"],
                                    "resolved": g["resolved"]}
                                   for t in tasks for g in t["gold"] if g.get("ambiguous")]
    scorers = {}
    for rname in wanted:
        log(f"{rname}: ranking")
        try:
            if rname == "bm25-files":
                rank, shape = bm25_files(corpus)
            elif rname == "bm25-functions":
                rank, shape = bm25_functions(corpus)
            elif rname == "bm25-functions+comments":
                rank, shape = bm25_functions(corpus, leading_comments=True)
            elif rname in variants:
                rank, shape = fielded_ranker(corpus, variants[rname], scorers)
            elif rname == "grep-route":
                rank, shape = grep_route(corpus)
            else:
                rank, shape = mcp_search(corpus, a.bin, a.mcp_wait, log, mcp_arguments(rname))
        except Skip as e:
            log(f"{rname}: skipped: {e}")
            result["rankers"][rname] = {"status": f"skipped: {e}"}
            continue
        entry = {"status": "ok", "shape": shape, "forms": {}}
        r0 = time.process_time()
        try:
            score_ranker(rname, rank, shape, tasks, entry, result["per_task"])
        except Exception as e:  # the server's search failing is a finding, not a crash
            if not rname.startswith("mcp"):
                raise
            log(f"{rname}: failed: {e}")
            entry = {"status": f"failed: {e}"}
        entry["cpu_s"] = round(time.process_time() - r0, 2)
        if hasattr(rank, "close"):
            rank.close()
        result["rankers"][rname] = entry
        log(f"{rname}: done ({entry['cpu_s']} s CPU)")
    result["build_seconds"] = corpus.build_seconds
    result["run"] = {"wall_s": round(time.perf_counter() - t0, 1), "cpu_s": round(time.process_time() - c0, 1)}
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, f"{name}.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    md = markdown(result)
    with open(os.path.join(a.out, f"{name}.md"), "w") as f:
        f.write(md)
    print(md)


def cmd_table(a):
    results = [json.load(open(p)) for p in a.results]
    text = TABLE_HEAD + "".join(line for r in results for line in table_rows(r))
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text, end="")


def paired(result, ranker, ref, form, key="fn_rank", k=5):
    """Tasks where `ranker` hits at k and `ref` does not (wins), and the reverse (losses)."""
    ranks = {}
    for r in result["per_task"]:
        if r["form"] == form and r["ranker"] in (ranker, ref):
            ranks[(r["sha"], r["ranker"])] = r[key]
    shas = {s for s, _ in ranks}
    hit = lambda s, n: bool(ranks.get((s, n))) and ranks[(s, n)] <= k
    wins = sum(1 for s in shas if hit(s, ranker) and not hit(s, ref))
    losses = sum(1 for s in shas if hit(s, ref) and not hit(s, ranker))
    return wins, losses


def cmd_variants(a):
    """variants.md / variants.json: every ranker of the result files, with fn@5 (and resolved)
    for each set and query form beside bm25-functions', the paired wins/losses, then the full
    table."""
    results = [json.load(open(p)) for p in a.results]
    ref = "bm25-functions"
    cols = [(r, f) for r in results for f in FORMS]
    names = []
    for r in results:
        for n, e in r["rankers"].items():
            if e["status"] == "ok" and e["shape"] == "definitions" and n not in names:
                names.append(n)
    head = "| variant | " + " | ".join(f"{r['set']} {f} fn@5 (Δ, +/-)" for r, f in cols) + \
        " | mean Δ fn@5 | " + " | ".join(f"{r['set']} {f} resolved" for r, f in cols if r["set"] != "nuttx") + " |\n"
    head += "|---|" + "---:|" * (len(cols) + 1 + sum(1 for r, f in cols if r["set"] != "nuttx")) + "\n"
    lines, summary = [], {}
    for n in names:
        cells, deltas, res, s = [], [], [], {}
        for r, f in cols:
            e = r["rankers"].get(n)
            b = r["rankers"].get(ref)
            if not e or e["status"] != "ok":
                cells.append("—")
                continue
            m, bm = e["forms"][f], b["forms"][f]
            d = 100 * (m["fn_hit@5"] - bm["fn_hit@5"])
            w, l = paired(r, n, ref, f)
            deltas.append(d)
            cells.append(f"{pct(m['fn_hit@5'])} ({d:+.1f}, +{w}/-{l})")
            s[f"{r['set']}/{f}"] = {k: m[k] for k in ("fn_hit@1", "fn_hit@5", "fn_hit@10", "fn_hit_resolved@5",
                                                    "file_hit@1", "file_hit@5", "file_hit@10", "mrr@10",
                                                    "page_bytes_mean", "ms_p50")}
            s[f"{r['set']}/{f}"]["fn@5_vs_bm25_functions"] = {"delta_points": round(d, 1), "wins": w, "losses": l}
        for r, f in cols:
            if r["set"] != "nuttx":
                e = r["rankers"].get(n)
                res.append(pct(e["forms"][f]["fn_hit_resolved@5"]) if e and e["status"] == "ok" else "—")
        mean = statistics.mean(deltas) if deltas else 0
        lines.append(f"| {n} | " + " | ".join(cells) + f" | {mean:+.1f} | " + " | ".join(res) + " |\n")
        summary[n] = s
    full = TABLE_HEAD + "".join(line for r in results for line in table_rows(r))
    text = ("# Ranked-search prototype variants\n\n"
            + "".join(f"- {r['set']}: {r['coverage']['tasks']} tasks, tree `{r['tree']}` at {r.get('tree_commit')}\n" for r in results)
            + "\nfn@5 in %, Δ in points over bm25-functions on the same set and form, +wins/-losses: tasks "
              "where the variant hits at 5 and bm25-functions does not, and the reverse. Variant configurations: "
              "`proto_variants()` in bench/rank_eval.py, and DECISIONS.md.\n\n"
            + head + "".join(lines) + "\n## All metrics\n\n" + full)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
        with open(os.path.splitext(a.out)[0] + ".json", "w") as f:
            json.dump({"variants": {n: proto_variants().get(n) for n in names}, "metrics": summary}, f, indent=1)
            f.write("\n")
    print(text, end="")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="score rankers on a task file")
    r.add_argument("tasks")
    r.add_argument("tree")
    r.add_argument("--name", help="task set name (default: the task file's stem)")
    r.add_argument("--rankers", default=",".join(DEFAULT_RANKERS),
                   help=f"comma-separated (or `;`-separated, for names with commas), of {', '.join(RANKERS)} "
                   "(default: all but the last) and the prototype variants of proto_variants(); shell "
                   "patterns allowed (`fielded:w*`)")
    r.add_argument("--out", default=os.path.join(HERE, "results", "rank-baseline"))
    r.add_argument("--cache", default="target/rank-bench/cache", help="where tokenized indexes are pickled")
    r.add_argument("--defs", choices=("rootgrep", "ctags"), default="rootgrep",
                   help="where function definitions and their line ranges come from")
    r.add_argument("--bin", default=DEFAULT_BIN,
                   help="rootgrep binary (outline definitions; the mcp ranker); default $ROOTGREP_BIN, else target/release/rootgrep")
    r.add_argument("--jobs", type=int, default=2, help="outline servers run at once")
    r.add_argument("--mcp-wait", type=float, default=600, help="seconds to wait for the server's indexes")
    r.add_argument("--git", help="the repository with history (GIT_DIR): finds which definition an answer "
                   "with an ambiguous name is (fn hit resolved); without it those count by line only")
    r.add_argument("--limit", type=int, help="only the first N tasks (a quick check)")
    r.add_argument("--tree-label", help="how the tree is named in the results (default: as given)")
    r.add_argument("--quiet", action="store_true")
    t = sub.add_parser("table", help="one markdown table from result files")
    t.add_argument("results", nargs="+")
    t.add_argument("--out")
    v = sub.add_parser("variants", help="the prototype variants' table (fn@5 vs bm25-functions, paired), then all metrics")
    v.add_argument("results", nargs="+")
    v.add_argument("--out")
    a = ap.parse_args()
    {"run": cmd_run, "table": cmd_table, "variants": cmd_variants}[a.cmd](a)


if __name__ == "__main__":
    main()
