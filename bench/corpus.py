#!/usr/bin/env python3
"""Deterministic synthetic source trees for rootgrep's benchmarks.

The same preset gives the same bytes on any machine (one seeded RNG, no time or host input),
so a figure measured on it can be rerun. The tree holds what a real repository holds and what
a search server must survive:

- source files in several languages (Rust, Python, TypeScript, C, Go) built from a shared
  vocabulary, so common words (`error`, `struct`, `return`) match in most files;
- the rare needle `zqxjkv_rare_needle` in a handful of files;
- one file with tens of thousands of matching lines (`many_matches.c`: every line has
  `struct`), the "many matches in one file" shape;
- a git repository (`git init`), a `.gitignore` that ignores `target/` and `*.log` (filled with
  files that must not be searched), hidden files and directories;
- binary files, a huge single-line file, UTF-16 (with BOM), Latin-1, CRLF and empty files, and a
  symlink loop.

    python3 bench/corpus.py --preset medium --out bench-corpora/medium

Presets: small (1k files), medium (20k), large (200k). A manifest (`<out>.manifest.json`) records
the preset and the counts; an existing corpus with the same manifest is kept.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys

PRESETS = {
    "small": {"files": 1_000, "dirs": 60, "lines": (10, 160), "many": 2_000},
    "medium": {"files": 20_000, "dirs": 900, "lines": (10, 260), "many": 20_000},
    "large": {"files": 200_000, "dirs": 8_000, "lines": (8, 220), "many": 50_000},
}

NEEDLE = "zqxjkv_rare_needle"

WORDS = (
    "account address agent alpha array batch buffer cache channel chunk client column config "
    "context cursor digest entry event field filter frame gauge handle header index item key "
    "label layer limit lock map message meta metric migration node nonce offset option page "
    "parser path payload policy pool queue range reader record region request response result "
    "retry role root route row scope session shard signal slot source span stack state status "
    "store stream table task tax tenant timer token trace tree update user value vector window "
    "worker writer"
).split()

LANGS = {
    "rs": [
        "pub struct {A}{B} {{ {a}: u64, {b}: Vec<String> }}",
        "impl {A}{B} {{",
        "    pub fn {a}_{b}(&self) -> Result<u64, Error> {{",
        "        let {a} = self.{b}.len() as u64;",
        "        if {a} == 0 {{ return Err(Error::new(\"empty {b}\")); }}",
        "        Ok({a} + {n})",
        "    }}",
        "}}",
        "// {a} {b}: handle the error path before the {c} is flushed",
        "use crate::{a}::{A}{C};",
    ],
    "py": [
        "class {A}{B}:",
        "    def {a}_{b}(self, {c}):",
        "        if not {c}:",
        "            raise ValueError(\"error: missing {b}\")",
        "        return self.{a} + {n}",
        "# {a} {b} {c}: retry on error",
        "import {a}.{b}",
        "{a}_{b} = {{\"{c}\": {n}}}",
    ],
    "ts": [
        "export interface {A}{B} {{ {a}: number; {b}: string[] }}",
        "export function {a}{B}({c}: {A}{C}): number {{",
        "  if (!{c}) {{ throw new Error(\"error in {b}\"); }}",
        "  return {c}.{a} + {n};",
        "}}",
        "// {a} {b}: {c} handling",
        "import {{ {A}{C} }} from './{a}/{b}';",
        "const {a}{B} = new Map<string, number>();",
    ],
    "c": [
        "struct {a}_{b} {{ int {c}; unsigned long {a}; }};",
        "static int {a}_{b}(struct {a}_{c} *{c})",
        "{{",
        "  if ({c} == NULL) return -EINVAL; /* error: no {b} */",
        "  return {c}->{a} + {n};",
        "}}",
        "#include <{a}/{b}.h>",
        "#define {A_UP}_{B_UP} {n}",
    ],
    "go": [
        "type {A}{B} struct {{ {A} int; {B} []string }}",
        "func ({c} *{A}{B}) {A}{C}() (int, error) {{",
        "\tif {c} == nil {{ return 0, errors.New(\"error: nil {b}\") }}",
        "\treturn {c}.{A} + {n}, nil",
        "}}",
        "// {a} {b}: the {c} path",
        "import \"{a}/{b}\"",
    ],
}
EXTS = ["rs", "py", "ts", "c", "go", "rs", "ts", "py"]


def line_for(rng, template):
    a, b, c = rng.choice(WORDS), rng.choice(WORDS), rng.choice(WORDS)
    return template.format(
        a=a, b=b, c=c, A=a.capitalize(), B=b.capitalize(), C=c.capitalize(),
        A_UP=a.upper(), B_UP=b.upper(), n=rng.randrange(1000),
    )


def source_text(rng, ext, lines):
    templates = LANGS[ext]
    return "\n".join(line_for(rng, rng.choice(templates)) for _ in range(lines)) + "\n"


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode, **({} if isinstance(data, bytes) else {"encoding": "utf-8", "newline": ""})) as f:
        f.write(data)


def generate(preset, out):
    spec = PRESETS[preset]
    rng = random.Random(f"rootgrep-bench-{preset}")
    counts = {"source": 0, "ignored": 0, "hidden": 0, "special": 0}

    # directories: a tree up to depth 5, names from the vocabulary
    tops = ["src", "lib", "services", "packages", "tools", "docs"]
    dirs = list(tops)
    while len(dirs) < spec["dirs"]:
        parent = rng.choice(dirs)
        if parent.count("/") >= 4:
            continue
        dirs.append(f"{parent}/{rng.choice(WORDS)}_{rng.choice(WORDS)}")
    dirs = sorted(set(dirs))

    needles = set(rng.sample(range(spec["files"]), 7))
    lo, hi = spec["lines"]
    for i in range(spec["files"]):
        ext = EXTS[i % len(EXTS)]
        d = rng.choice(dirs)
        name = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}_{i}.{ext}"
        text = source_text(rng, ext, rng.randint(lo, hi))
        if i in needles:
            text += f"// {NEEDLE} planted here\n"
        write(os.path.join(out, d, name), text)
        counts["source"] += 1

    # many matches in one file
    many = "\n".join(
        f"struct many_{k} {{ int {rng.choice(WORDS)}; }};" for k in range(spec["many"])
    )
    write(os.path.join(out, "src", "many_matches.c"), many + "\n")

    # ignored by .gitignore (inside a git repository, as users have them)
    write(os.path.join(out, ".gitignore"), "target/\n*.log\n")
    for i in range(max(20, spec["files"] // 50)):
        write(os.path.join(out, "target", "debug", f"build_{i}.rs"),
              source_text(rng, "rs", 40) + f"// {NEEDLE} in an ignored file\n")
        counts["ignored"] += 1
    write(os.path.join(out, "run.log"), "error: ignored log line\n" * 1000)

    # hidden
    for i in range(max(10, spec["files"] // 200)):
        write(os.path.join(out, ".config", f"hidden_{i}.toml"), f"error = {i}\n")
        counts["hidden"] += 1
    write(os.path.join(out, "src", ".hidden.rs"), f"// {NEEDLE} hidden\n")

    # awkward files
    special = os.path.join(out, "special")
    write(os.path.join(special, "blob.bin"), bytes(rng.randrange(256) for _ in range(65536)))
    write(os.path.join(special, "nul_then_text.dat"), b"\x00\x01\x02error\n" * 100)
    write(os.path.join(special, "one_line.min.js"),
          "var a=1;" * 400_000 + f"/*{NEEDLE}*/" + "var b=2;" * 100_000)
    write(os.path.join(special, "utf16.txt"), "\ufefferror in utf-16\nsecond line\n".encode("utf-16-le"))
    write(os.path.join(special, "latin1.txt"), "caf\xe9 error\n".encode("latin-1"))
    write(os.path.join(special, "crlf.txt"), "error at end\r\nsecond\r\n")
    write(os.path.join(special, "empty.txt"), "")
    write(os.path.join(special, "设计 文档.md"), "error in a file with a Chinese name\n")
    loop = os.path.join(special, "loop")
    os.makedirs(loop, exist_ok=True)
    if not os.path.lexists(os.path.join(loop, "self")):
        os.symlink("..", os.path.join(loop, "self"))
    counts["special"] = 9

    subprocess.run(["git", "init", "-q", out], check=True)
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="medium")
    ap.add_argument("--out", required=True)
    ap.add_argument("--force", action="store_true", help="regenerate even if the manifest matches")
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    manifest = out.rstrip("/") + ".manifest.json"
    if not args.force and os.path.exists(manifest) and os.path.isdir(out):
        with open(manifest) as f:
            if json.load(f).get("preset") == args.preset:
                print(f"corpus {args.preset}: reusing {out}")
                return
    if os.path.exists(out):
        shutil.rmtree(out)
    counts = generate(args.preset, out)
    with open(manifest, "w") as f:
        json.dump({"preset": args.preset, "generator": "bench/corpus.py", **counts}, f, indent=1)
    print(f"corpus {args.preset}: {counts} -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
