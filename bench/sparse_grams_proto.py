#!/usr/bin/env python3
"""What sparse n-grams would cost and buy the content index (issue #38, word-soup `grep`),
measured before building anything:

    python3 bench/sparse_grams_proto.py TREE [--files 1500] [--seed 1]

Samples --files regular text files of TREE (seeded), folds ASCII letters as the content
index does, and counts per file the distinct trigrams (what the index holds now) and the
distinct sparse n-grams up to a length cap (GitHub code search's scheme: a substring is a
gram when the weights of its first and last byte pairs are both above every pair inside
it; every trigram is one, so the set only grows). Weights: a hash of the byte pair. For a
few patterns it then counts the sampled files holding all their trigrams, all the
maximal sparse grams of the pattern (a file holding the pattern holds every sparse gram of
it: being a gram depends only on the gram's own bytes), and the pattern itself. Postings
are the (gram, file) pairs: the content index's size is about proportional to them.
"""
import argparse, os, random, zlib

PATTERNS = [b"width_cache", b"retry is writer metric", b"deprecated_api_call", b"zqxjkv"]


def fold(data):
    return bytes(b | 0x20 if 65 <= b <= 90 else b for b in data)


def weight(a, b):
    return zlib.crc32(bytes([a, b]))


def sparse(text, cap):
    w = [weight(text[i], text[i + 1]) for i in range(len(text) - 1)]
    out = set()
    for i in range(len(w)):
        inside = -1
        for j in range(i + 1, min(len(w), i + cap - 1)):
            if j > i + 1:
                inside = max(inside, w[j - 1])
            if inside >= w[i]:
                break
            if w[j] > inside:
                out.add(text[i:j + 2])
    return out


def trigrams(text):
    return {text[i:i + 3] for i in range(len(text) - 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tree")
    ap.add_argument("--files", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--caps", default="4,6,8,12")
    a = ap.parse_args()
    paths = [os.path.join(d, f) for d, _, fs in os.walk(a.tree) for f in fs]
    random.Random(a.seed).shuffle(paths)
    texts = []
    for path in paths:
        if len(texts) == a.files:
            break
        try:
            data = open(path, "rb").read()
        except OSError:
            continue
        if b"\0" in data[:8000] or len(data) > 1 << 20:
            continue
        texts.append(fold(data))
    source = sum(len(t) for t in texts)
    tri = [trigrams(t) for t in texts]
    tri_postings = sum(len(s) for s in tri)
    print(f"{len(texts)} files, {source / 1e6:.1f} MB; trigram postings {tri_postings} "
          f"({tri_postings / source:.3f} per byte)")
    for p in PATTERNS:
        q = trigrams(p)
        print(f"  {p.decode()!r}: trigram candidates {sum(q <= s for s in tri)}, "
              f"files holding it {sum(p in t for t in texts)}")
    for cap in [int(c) for c in a.caps.split(",")]:
        grams = [sparse(t, cap) for t in texts]
        postings = sum(len(s) for s in grams)
        cells = []
        for p in PATTERNS:
            mine = sparse(p, cap)
            maximal = {g for g in mine if not any(g != h and g in h for h in mine)}
            cells.append(f"{p.decode()!r} {sum(maximal <= s for s in grams)}")
        print(f"cap {cap}: postings {postings} ({postings / tri_postings:.2f}x trigrams); "
              f"candidates: " + ", ".join(cells))


if __name__ == "__main__":
    main()
