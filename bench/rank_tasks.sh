#!/usr/bin/env bash
# Builds the ranked-search task sets (PRODUCT §14) with the shared task builder, reproducibly:
# each repository is pinned to a commit, its tree at that commit is tagged with Universal
# Ctags, and build_tasks.py turns its bug-fix commits into tasks.
#
#   bench/rank_tasks.sh [nuttx] [ripgrep]        (default: both)
#
# Writes bench/results/rank-tasks/{nuttx,ripgrep}.jsonl. Environment (defaults in brackets):
#   BUILD_TASKS   the shared task builder, build_tasks.py (required)
#   NUTTX_GIT     apache/nuttx with full history (required for nuttx)
#   NUTTX_TREE    a checkout of NUTTX_COMMIT [bench-corpora/nuttx]
#   RG_GIT        BurntSushi/ripgrep with full history (required for ripgrep)
#   RG_TREE       where its tree is laid out (cloned from RG_GIT if missing) [bench-corpora/ripgrep]
#   WORK          scratch: tags files, the attributes file [target/rank-bench]
# build_tasks.py walks the history from the git directory's HEAD, so each HEAD must be the
# pinned commit: the script stops otherwise (set NUTTX_COMMIT / RG_COMMIT to re-pin, and
# rebuild the tasks and the baseline together).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(dirname "$HERE")"
BUILD_TASKS="${BUILD_TASKS:?set BUILD_TASKS to the shared build_tasks.py}"
NUTTX_GIT="${NUTTX_GIT:-}"
NUTTX_TREE="${NUTTX_TREE:-$REPO/bench-corpora/nuttx}"
NUTTX_COMMIT="${NUTTX_COMMIT:-4ebc8a7291df955dece09073b8798db2dfd6490b}"
RG_GIT="${RG_GIT:-}"
RG_TREE="${RG_TREE:-$REPO/bench-corpora/ripgrep}"
RG_COMMIT="${RG_COMMIT:-3fce3b5bb0236da2df6d99672afb8a719642eca7}"
WORK="${WORK:-$REPO/target/rank-bench}"
OUT="$REPO/bench/results/rank-tasks"

sets=("$@")
[ ${#sets[@]} -eq 0 ] && sets=(nuttx ripgrep)
mkdir -p "$WORK" "$OUT"
command -v ctags >/dev/null || { echo "needs Universal Ctags (apt-get install universal-ctags)" >&2; exit 1; }

check_head() {  # GITDIR COMMIT
    local head
    head="$(git --git-dir="$1" rev-parse HEAD)"
    if [ "$head" != "$2" ]; then
        echo "$1: HEAD is $head, the tasks are pinned to $2 (build_tasks.py walks from HEAD)" >&2
        exit 1
    fi
}

tags() {  # TREE TAGS: tags of the tree, paths relative to its root (as build_tasks.py wants)
    (cd "$1" && ctags -R --fields=+n -f "$2" . 2>/dev/null)
}

for set in "${sets[@]}"; do
    case "$set" in
    nuttx)
        [ -n "$NUTTX_GIT" ] || { echo "set NUTTX_GIT to apache/nuttx with its history" >&2; exit 2; }
        check_head "$NUTTX_GIT" "$NUTTX_COMMIT"
        tree_head="$(git -C "$NUTTX_TREE" rev-parse HEAD)"
        [ "$tree_head" = "$NUTTX_COMMIT" ] || { echo "$NUTTX_TREE is at $tree_head, not $NUTTX_COMMIT" >&2; exit 1; }
        tags "$NUTTX_TREE" "$WORK/nuttx.tags"
        python3 "$BUILD_TASKS" "$NUTTX_GIT" "$WORK/nuttx.tags" "$OUT/nuttx.jsonl" \
            --since 2022-01-01 --until 2024-06-01 --n 200 --seed 3
        ;;
    ripgrep)
        [ -n "$RG_GIT" ] || { echo "set RG_GIT to BurntSushi/ripgrep with its history" >&2; exit 2; }
        check_head "$RG_GIT" "$RG_COMMIT"
        if [ ! -d "$RG_TREE" ]; then
            mkdir -p "$(dirname "$RG_TREE")"
            git clone -q --no-checkout "$RG_GIT" "$RG_TREE"
            git -C "$RG_TREE" checkout -q --detach "$RG_COMMIT"
        fi
        tree_head="$(git -C "$RG_TREE" rev-parse HEAD)"
        [ "$tree_head" = "$RG_COMMIT" ] || { echo "$RG_TREE is at $tree_head, not $RG_COMMIT" >&2; exit 1; }
        # Rust hunk headers need git's rust funcname pattern; only .rs hunks count.
        printf '*.rs diff=rust\n' > "$WORK/rust.gitattributes"
        tags "$RG_TREE" "$WORK/ripgrep.tags"
        # The whole history up to the pinned HEAD: the builder keeps ~100 of it (ripgrep's
        # files moved into crates/ in 2018-2019, so few older fixes still have their function).
        python3 "$BUILD_TASKS" "$RG_GIT" "$WORK/ripgrep.tags" "$OUT/ripgrep.jsonl" \
            --since 2016-01-01 --until 2026-08-05 --n 200 --seed 3 \
            --attributes "$WORK/rust.gitattributes" --ext rs
        ;;
    *) echo "unknown task set: $set (nuttx, ripgrep)" >&2; exit 2 ;;
    esac
done
ls -l "$OUT"
