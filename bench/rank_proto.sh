#!/usr/bin/env bash
# Ranked-search prototype variants (bench/results/rank-proto): bm25-functions, the comment
# variant, and every prototype variant of bench/rank_eval.py (proto_variants) on both task
# sets, then variants.md / variants.json. See bench/results/rank-proto/DECISIONS.md.
#
#   bench/rank_proto.sh
#
# Environment: as bench/rank_bench.sh (ROOTGREP_BIN, NUTTX_TREE, RG_TREE, NUTTX_GIT, RG_GIT,
# CACHE). The trees default to /work/main/bench-corpora/nuttx and /work/h-rank/bench-corpora/ripgrep
# when this checkout has none. Runs niced, one set after the other.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(dirname "$HERE")"
cd "$REPO"
ROOTGREP_BIN="${ROOTGREP_BIN:-$REPO/target/release/rootgrep}"
[ -x "$ROOTGREP_BIN" ] || ROOTGREP_BIN=/work/main/target/release/rootgrep
if [ -z "${NUTTX_TREE:-}" ]; then
    NUTTX_TREE="$REPO/bench-corpora/nuttx"
    [ -d "$NUTTX_TREE" ] || NUTTX_TREE=/work/main/bench-corpora/nuttx
fi
if [ -z "${RG_TREE:-}" ]; then
    RG_TREE="$REPO/bench-corpora/ripgrep"
    [ -d "$RG_TREE" ] || RG_TREE=/work/h-rank/bench-corpora/ripgrep
fi
NUTTX_GIT="${NUTTX_GIT:-/work/.mirror/apache+nuttx/repo}"
RG_GIT="${RG_GIT:-/work/.mirror/BurntSushi+ripgrep/repo}"
CACHE="${CACHE:-/tmp/rank-bench/cache}"
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
