#!/usr/bin/env bash
# Ranked-search baseline (PRODUCT §14): every ranker of bench/rank_eval.py on both task sets of
# bench/rank_tasks.sh, then one table of both. See bench/RANKING.md.
#
#   bench/rank_bench.sh [--cold]      --cold: drop the cached indexes first (build times recorded)
#
# Environment (defaults in brackets):
#   ROOTGREP_BIN  the binary: outline definitions, the mcp ranker [target/release/rootgrep]
#   NUTTX_TREE    apache/nuttx at the tasks' commit [bench-corpora/nuttx]
#   RG_TREE       BurntSushi/ripgrep at the tasks' commit [bench-corpora/ripgrep]
#   NUTTX_GIT, RG_GIT  the repositories with history, to resolve answers with ambiguous names
#                 (required: a clone or a bare git directory of each)
#   CACHE         where tokenized indexes are pickled [target/rank-bench/cache]
#   RANKERS       [bm25-files,bm25-functions,grep-route,mcp,bm25-functions+comments]
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
RANKERS="${RANKERS:-bm25-files,bm25-functions,grep-route,mcp,bm25-functions+comments}"
OUT="${OUT:-$REPO/bench/results/rank-baseline}"

if [ "${1:-}" = "--cold" ]; then
    rm -f "$CACHE"/*.pkl
fi
[ -d "$RG_TREE" ] || { echo "$RG_TREE missing: run bench/rank_tasks.sh ripgrep first (it lays the tree out)" >&2; exit 1; }

run() {  # SET TREE LABEL GIT_DIR
    /usr/bin/time -f "$1: %e s wall, %U s user, %S s sys, %M KiB max RSS" \
        python3 bench/rank_eval.py run "bench/results/rank-tasks/$1.jsonl" "$2" --name "$1" --git "$4" \
            --bin "$ROOTGREP_BIN" --cache "$CACHE" --rankers "$RANKERS" --tree-label "$3" --out "$OUT" >/dev/null
}
run nuttx "$NUTTX_TREE" bench-corpora/nuttx "$NUTTX_GIT"
run ripgrep "$RG_TREE" bench-corpora/ripgrep "$RG_GIT"
python3 bench/rank_eval.py table "$OUT/nuttx.json" "$OUT/ripgrep.json" --out "$OUT/baseline.md"
