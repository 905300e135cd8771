#!/usr/bin/env bash
# rootgrep vs ripgrep, side by side in one run, on a real source tree and on generated ones.
# Everything it needs is in this directory: the driver (driver.py), the corpus generator
# (corpus.py), the real-tree layout (real_tree.py) and the idle-cost probe (idle_probe.py).
# Figures of the last run: BENCHMARKS.md (repository root).
#
#   bench/run.sh [--real GIT_DIR] [--large] [--k N] [--bin PATH] [--out DIR] [--only LIST]
#
#   --real GIT_DIR  lay out this repository's HEAD as bench-corpora/<name> (a clone or a bare
#                   git directory, e.g. of apache/nuttx) and run every section on it first
#   --large         also generate the large preset (200k files) and run the glob cases on it
#   --k N           timed runs per case (default 5; one untimed warm-up first)
#   --bin PATH      use this rootgrep binary (default: cargo build --release)
#   --out DIR       where results go (default bench/results)
#   --only LIST     sections (default all): warm,full,cold,first,idle,live,churn
#
# Sections, for each tree (real first, then the generated medium one):
#   warm   the default server (watcher + index), after list_roots says the index is fresh:
#          every query shape of cases/shapes.json (default 64 KiB budget, first page)
#   full   the same server with --max-output-bytes 256 MiB and head_limit 0: the same output as
#          rg (cases/shapes_full.json)
#   cold   --no-watch (no index, every call walks): cases/shapes.json
#   first  the first grep of a fresh server (client roots, watcher on, index not built yet),
#          one server per sample
#   idle   server CPU while rg reads the whole tree 5 times beside an idle server
#   live   roots answered -> index fresh, RSS with the index, resources/list and
#          completion/complete latency (live_probe.py)
#   churn  (once, on generated temp trees) server CPU while 25,000 files are created in the
#          root, and in an ignored target/ (churn_probe.py)
#
# Pairing is fair (driver.py): the server is stopped (SIGSTOP) while rg runs and left to go
# quiet after it resumes; ratios are medians of per-pair ratios from one run.
# Needs python3, git, rg (installed with apt-get when missing).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
real="" large=0 k=5 bin="" out="$here/results" only="warm,full,cold,first,idle,live,churn"
while [ $# -gt 0 ]; do
  case "$1" in
    --real) real=$2; shift ;;
    --large) large=1 ;;
    --k) k=$2; shift ;;
    --bin) bin=$(realpath "$2"); shift ;;
    --out) out=$(realpath -m "$2"); shift ;;
    --only) only=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
want() { case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

command -v rg >/dev/null || {
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep
}
mkdir -p "$out" "$repo/bench-corpora"

if [ -z "$bin" ]; then
  (cd "$repo" && cargo build --release --locked)
  bin="$repo/target/release/rootgrep"
fi
commit=$(git -C "$repo" rev-parse --short HEAD)
dirty=$(git -C "$repo" status --porcelain -- src Cargo.toml Cargo.lock | head -1)
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "rootgrep: $bin, commit $commit${dirty:+ (with uncommitted changes)}"
  echo "nproc: $(nproc); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "kernel: $(uname -sr); memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "rg: $(rg --version | head -1); k: $k; sections: $only"
  echo "loadavg before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/meta.txt"

trees=()
if [ -n "$real" ]; then
  trees+=("$(basename "$(python3 "$here/real_tree.py" "$real")")")
fi
python3 "$here/corpus.py" --preset medium --out "$repo/bench-corpora/medium"
trees+=(medium)
[ $large = 1 ] && python3 "$here/corpus.py" --preset large --out "$repo/bench-corpora/large"

vars_for() {  # the query variables of a tree
  case "$1" in
    medium|large) echo "--var RARE=zqxjkv_rare_needle --var GLOB=*.c --var TYPE=rust --var MANY=src/many_matches.c --var MANYPAT=struct" ;;
    nuttx) echo "--var RARE=add_irq_randomness --var GLOB=*.h --var TYPE=c --var MANY=arch/arm/src/imx9/hardware/imx9_flexcan.h --var MANYPAT=#define" ;;
    *) echo "--var RARE=${RARE:-main} --var GLOB=${GLOB:-*.c} --var TYPE=${TYPE:-c} --var MANY=${MANY:-README.md} --var MANYPAT=${MANYPAT:-the}" ;;
  esac
}

for tree in "${trees[@]}"; do
  root="$repo/bench-corpora/$tree"
  # shellcheck disable=SC2046
  set -- $(vars_for "$tree")
  rg -n zzz_warm_the_page_cache "$root" >/dev/null || true
  if want warm; then
    python3 "$here/driver.py" --server "$bin" --root "$root" --cases "$here/cases/shapes.json" "$@" \
      -k "$k" -w 1 --startup-runs 10 --ping-runs 50 --wait-fresh --label "$tree, warm" \
      --json "$out/$tree.warm.json" | tee "$out/$tree.warm.md"
  fi
  if want full; then
    python3 "$here/driver.py" --server "$bin --max-output-bytes 268435456" --root "$root" \
      --cases "$here/cases/shapes_full.json" "$@" -k "$k" -w 1 --startup-runs 0 --ping-runs 0 \
      --wait-fresh --label "$tree, warm, full output" --json "$out/$tree.full.json" | tee "$out/$tree.full.md"
  fi
  if want cold; then
    python3 "$here/driver.py" --server "$bin --no-watch" --root "$root" --cases "$here/cases/shapes.json" "$@" \
      -k "$k" -w 1 --startup-runs 10 --ping-runs 0 --label "$tree, --no-watch" \
      --json "$out/$tree.cold.json" | tee "$out/$tree.cold.md"
  fi
  if want first; then
    for i in $(seq 1 "$k"); do
      python3 "$here/driver.py" --server "$bin" --root "$root" --cases "$here/cases/shapes.json" "$@" \
        --only '^(rare literal -l|content, first page)$' -k 1 -w 0 --startup-runs 0 --ping-runs 0 \
        --label "$tree, first call $i" --json "$out/$tree.first.$i.json" >/dev/null
    done
    python3 - "$out" "$tree" <<'EOF' | tee "$out/$tree.first.md"
import glob, json, statistics, sys
out, tree = sys.argv[1], sys.argv[2]
rows = {}
for path in sorted(glob.glob(f"{out}/{tree}.first.*.json")):
    for case in json.load(open(path))["cases"]:
        rows.setdefault(case["name"], []).extend(case["ratio"])
print(f"## {tree}, first call of a fresh server (watcher on, index not built)\n")
print("| case | ratio to rg (median, min–max) | n |\n|---|---|---|")
for name, r in rows.items():
    print(f"| {name} | **{statistics.median(r):.2f}×** ({min(r):.2f}–{max(r):.2f}) | {len(r)} |")
EOF
  fi
  if want idle; then
    python3 "$here/idle_probe.py" --server "$bin" --root "$root" --n 5 | tee "$out/$tree.idle.md"
  fi
  if want live; then
    python3 "$here/live_probe.py" --server "$bin" --root "$root" --json "$out/$tree.live.json" \
      --n 300 --n-list 10 --complete '{ROOTREL}/' --complete '{ROOTREL}/src/' | tee "$out/$tree.live.md"
  fi
done

if [ $large = 1 ] && want warm; then
  python3 "$here/driver.py" --server "$bin --max-output-bytes 268435456" --root "$repo/bench-corpora/large" \
    --cases "$here/cases/shapes_full.json" --only glob $(vars_for large) -k "$k" -w 1 --startup-runs 0 \
    --ping-runs 0 --wait-fresh --label "large, warm, glob full output" --json "$out/large.glob.json" \
    | tee "$out/large.glob.md"
fi
if want churn; then
  python3 "$here/churn_probe.py" --server "$bin" --files 25000 --json "$out/churn.json" \
    | tee "$out/churn.md"
fi
echo "loadavg after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/meta.txt"
