#!/usr/bin/env bash
# rootgrep on one large tree (a monorepo): what a user waits for after a first start and a
# restart, what the server holds, and what each agent-style grep costs against rg.
# Figures of the last runs: BENCHMARKS.md, "A million files".
#
#   bench/scale.sh --tree DIR [--name NAME] [--bin PATH] [--k N] [--restarts N] [--out DIR]
#                  [--cases FILE] [--var NAME=VALUE ...]
#
#   --tree DIR     the tree (generate one with the shared kit's generator, e.g.
#                  `python3 GEN --preset large --files 1000000 --out DIR`, or lay out a real
#                  repository with real_tree.py)
#   --name NAME    the tree's name in result files (default: DIR's base name)
#   --bin PATH     the rootgrep binary (default: cargo build --profile profiling)
#   --k N          timed runs per query case (default 5; one untimed warm-up first)
#   --restarts N   restarts measured after the first start (default 2; the last one sends
#                  a symbols query at once, which walks the tree itself while the file
#                  index is not fresh: quote the others for "restart ready")
#   --out DIR      where results go (default bench/results/scale-DATE)
#   --cases FILE   query cases (default cases/agent.json)
#   --var N=V      query variables (defaults for the generated corpus: RARE, IDENT, PHRASE,
#                  REGEX; for nuttx pass e.g. --var IDENT=nxsem_wait)
#
# Sections:
#   start  restart_probe.py: a fresh cache directory, then --restarts restarts on it: the
#          file index fresh, the content index (grep), symbol index and search index ready,
#          the server's CPU seconds at each, its own memory (RssAnon) and peak (VmHWM), the
#          store's size against the source's.
#   warm   driver.py with --wait-fresh (every index built) on the cases, each paired with
#          its rg command (the server stopped while rg runs; ratios are medians of pairs).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
tree="" name="" bin="" k=5 restarts=2 out="" cases="$here/cases/agent.json"
vars=(--var RARE=zqxjkv_rare_needle --var IDENT=width_cache --var "PHRASE=retry is writer metric"
      --var 'REGEX=fn \w+_cache\(router')
while [ $# -gt 0 ]; do
  case "$1" in
    --tree) tree=$(realpath "$2"); shift ;;
    --name) name=$2; shift ;;
    --bin) bin=$(realpath "$2"); shift ;;
    --k) k=$2; shift ;;
    --restarts) restarts=$2; shift ;;
    --out) out=$(realpath -m "$2"); shift ;;
    --cases) cases=$(realpath "$2"); shift ;;
    --var) vars+=(--var "$2"); shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$tree" ] || { echo "--tree DIR is required" >&2; exit 2; }
name=${name:-$(basename "$tree")}
out=${out:-$here/results/scale-$(date -u +%Y-%m-%d)}
command -v rg >/dev/null || { echo "needs rg (apt-get install ripgrep)" >&2; exit 2; }
if [ -z "$bin" ]; then
  (cd "$repo" && cargo build --profile profiling --locked)
  bin="$repo/target/profiling/rootgrep"
fi
mkdir -p "$out"
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ); tree: $name"
  echo "rootgrep: $("$bin" --version)"
  echo "nproc: $(nproc); memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "rg: $(rg --version | head -1); k: $k"
} | tee "$out/$name.meta.txt"

# The page cache warm for both (rg reads the tree once first).
rg -n zzz_warm_the_page_cache "$tree" >/dev/null || true
python3 "$here/restart_probe.py" --server "$bin" --root "$tree" --cache-dir "$cache" \
  --restarts "$restarts" --timeout 7200 --poll 500 --json "$out/$name.start.json" \
  2>&1 | tee "$out/$name.start.txt"
python3 "$here/driver.py" --server "$bin --cache-dir $cache" --root "$tree" --cases "$cases" \
  "${vars[@]}" -k "$k" -w 1 --startup-runs 0 --ping-runs 0 --wait-fresh --timeout 7200 \
  --label "$name, warm" --json "$out/$name.warm.json" | tee "$out/$name.warm.md"
