#!/usr/bin/env bash
# Ranked-search prototype variants (bench/results/rank-proto): bm25-functions, the comment
# variant, and every prototype variant of bench/rank_eval.py (proto_variants) on both task
# sets, then variants.md / variants.json. See bench/results/rank-proto/DECISIONS.md.
#
#   bench/rank_proto.sh
#
# Environment: as bench/rank_bench.sh (ROOTGREP_BIN, NUTTX_TREE, RG_TREE, NUTTX_GIT, RG_GIT,
# CACHE), with the same defaults. Runs niced, one set after the other.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(dirname "$HERE")"
cd "$REPO"
ROOTGREP_BIN="${ROOTGREP_BIN:-$REPO/target/release/rootgrep}"
NUTTX_TREE="${NUTTX_TREE:-$REPO/bench-corpora/nuttx}"
RG_TREE="${RG_TREE:-$REPO/bench-corpora/ripgrep}"
NUTTX_GIT="${NUTTX_GIT:?set NUTTX_GIT to a clone or bare git directory of apache/nuttx}"
RG_GIT="${RG_GIT:?set RG_GIT to a clone or bare git directory of BurntSushi/ripgrep}"
CACHE="${CACHE:-$REPO/target/rank-bench/cache}"
RANKERS="${RANKERS:-bm25-files;bm25-functions;bm25-functions+comments;fielded:w*;fielded;fielded-no-*;fielded+file*;fielded+hint+code;proto-all*}"
OUT="$REPO/bench/results/rank-proto"

run() {  # SET TREE LABEL GIT_DIR
    /usr/bin/time -f "$1: %e s wall, %U s user, %S s sys, %M KiB max RSS" \
        nice -n 10 python3 bench/rank_eval.py run "bench/results/rank-tasks/$1.jsonl" "$2" --name "$1" --git "$4" \
            --bin "$ROOTGREP_BIN" --cache "$CACHE" --rankers "$RANKERS" --tree-label "$3" --out "$OUT" --quiet >/dev/null
}
run nuttx "$NUTTX_TREE" bench-corpora/nuttx "$NUTTX_GIT"
run ripgrep "$RG_TREE" bench-corpora/ripgrep "$RG_GIT"
python3 bench/rank_eval.py variants "$OUT/nuttx.json" "$OUT/ripgrep.json" --out "$OUT/variants.md" >/dev/null
