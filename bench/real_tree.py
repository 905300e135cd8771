#!/usr/bin/env python3
"""Lays out a real public source tree for the benchmarks, as a user has it: the files of
HEAD (no history) with `git init` run in the result, so .gitignore rules apply as they do for
users. The tree goes to bench-corpora/NAME (git-ignored; never commit it).

    python3 bench/real_tree.py GIT_DIR_OR_CLONE [NAME]

GIT_DIR_OR_CLONE is a clone or a bare git directory of the repository (e.g. apache/nuttx,
27k files). Blobs missing from a partial copy (some mirrors leave out the largest files) are
skipped and counted. Symlinks are recreated; an existing tree for the same commit is kept. Prints the tree's path.
"""
import os
import subprocess
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    src = sys.argv[1]
    git_dir = subprocess.run(["git", "-C", src, "rev-parse", "--absolute-git-dir"],
                             capture_output=True, text=True).stdout.strip() or src
    # a clone's name (…/nuttx/.git), or the repository part of an owner+name mirror directory
    default = os.path.basename(os.path.dirname(git_dir.rstrip("/"))).split("+")[-1]
    name = sys.argv[2] if len(sys.argv) > 2 else default
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench-corpora", name)
    out = os.path.normpath(out)
    git = ["git", f"--git-dir={git_dir}"]
    head = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    marker = os.path.join(out, ".laid-out")
    if os.path.exists(marker) and open(marker).read().strip() == head:
        print(f"real tree {name}: reusing {out}", file=sys.stderr)
        print(out)
        return
    subprocess.run(["rm", "-rf", out], check=True)
    os.makedirs(out)
    listing = subprocess.run(git + ["ls-tree", "-r", "-z", "HEAD"], capture_output=True, check=True).stdout
    entries = []
    for item in listing.split(b"\0"):
        if not item:
            continue
        meta, path = item.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob":
            entries.append((mode, sha, path))
    cat = subprocess.Popen(git + ["cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    written = missing = 0
    for mode, sha, path in entries:
        cat.stdin.write(sha + b"\n")
        cat.stdin.flush()
        header = cat.stdout.readline().split()
        if header[-1] == b"missing":
            missing += 1
            continue
        data = cat.stdout.read(int(header[2]))
        cat.stdout.read(1)
        target = os.path.join(out.encode(), path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if mode == b"120000":
            os.symlink(data, target)
        else:
            with open(target, "wb") as f:
                f.write(data)
            if mode == b"100755":
                os.chmod(target, 0o755)
        written += 1
    cat.stdin.close()
    cat.wait()
    subprocess.run(["git", "init", "-q", out], check=True)
    with open(marker, "w") as f:
        f.write(head + "\n")
    print(f"real tree {name}: {written} files at {head[:12]} ({missing} blobs missing from the copy) -> {out}",
          file=sys.stderr)
    print(out)


if __name__ == "__main__":
    main()
