#!/usr/bin/env bash
# rootgrep vs ripgrep (and vs the official MCP filesystem server), side by side in one run.
# Figures of the last run: BENCHMARKS.md (repository root) and bench/RESULTS.md.
#
#   bench/run.sh [--large] [--anchors] [--k N] [--from-head] [--bin PATH] [--out DIR] [--only LIST]
#
#   --large       also generate the large preset (200k files, ~2.6 GiB) and time glob / file
#                 listing, the live index (time to fresh, RSS) and completion on it
#   --anchors     also install @modelcontextprotocol/server-filesystem (npm, into
#                 $FS_SERVER_PREFIX, default /tmp/fs-server, never into the repository) and
#                 compare it with rootgrep on the same tree (search_files / read_text_file /
#                 list_directory vs glob / read_file / list_directory)
#   --k N         timed runs per case (default 7; one untimed warm-up run first)
#   --from-head   build a snapshot of `git HEAD` (git archive) instead of the working tree,
#                 in target/bench-head/ (use when the working tree is mid-edit)
#   --bin PATH    use this rootgrep binary, do not build
#   --out DIR     where results go (default bench/results)
#   --only LIST   comma-separated sections to run (default all): cold, first, oneshot, live,
#                 warm, anchors (anchors needs --anchors; large parts need --large)
#
# Needs python3, rg, hyperfine, cargo (and node/npm with --anchors); when rg, hyperfine or npm
# are missing, they are installed with apt-get (as root, or through sudo). The benchmark kit
# (gen_corpus.py, mcp_bench.py) is looked up in $BENCH_KIT (default: ../shared/bench next to the
# repository). Corpora go to bench-corpora/ at the repository root (git-ignored; never commit
# them); they are deterministic, so an existing one is reused.
#
# Sections (each rootgrep call is paired with the rg command, A B A B ..., so a ratio is the
# median of per-pair ratios from the same run):
#   cold     rootgrep --no-watch (no index: every call walks the tree), bench/cases/medium.json
#            (+ cold_extra.json); with --large, large.json + cold_large_extra.json
#   first    first call in a fresh server (index not built yet), one server per sample
#   oneshot  `rootgrep call ...` (fresh process) vs rg, hyperfine
#   live     bench/live_probe.py: roots answered -> index fresh, RSS with the index,
#            resources/list first page, completion/complete p50/p90/p99 (all samples kept)
#   warm     rootgrep with its watcher and index (the default), after the index is fresh
#            (mcp_bench --settle = 3 x the time to fresh measured by `live` + 3 s; the first and
#            last case check that list_roots says "index: fresh"): warm_medium.json, warm_large.json
#   anchors  the official filesystem server vs rootgrep (warm) on the same tree
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
kit=${BENCH_KIT:-$(cd "$repo/../shared/bench" 2>/dev/null && pwd || true)}
fs_prefix=${FS_SERVER_PREFIX:-/tmp/fs-server}
large=0 anchors=0 k=7 from_head=0 bin="" out="$here/results" only="cold,first,oneshot,live,warm,anchors"
while [ $# -gt 0 ]; do
  case "$1" in
    --large) large=1 ;;
    --anchors) anchors=1 ;;
    --k) k=$2; shift ;;
    --from-head) from_head=1 ;;
    --bin) bin=$(realpath "$2"); shift ;;
    --out) out=$(realpath -m "$2"); shift ;;
    --only) only=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
want() { case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
[ -f "$kit/mcp_bench.py" ] || { echo "benchmark kit not found (set BENCH_KIT)" >&2; exit 2; }

# ---------------------------------------------------------------- tools (fresh machine)
apt_install() {  # apt_install PKG...
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  echo "installing with apt-get: $*"
  $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}
command -v python3 >/dev/null || { echo "python3 not on PATH" >&2; exit 2; }
command -v rg >/dev/null || apt_install ripgrep
command -v hyperfine >/dev/null || apt_install hyperfine
if [ $anchors = 1 ]; then
  command -v npm >/dev/null || apt_install nodejs npm
  fs_js="$fs_prefix/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
  if [ ! -f "$fs_js" ]; then
    echo "installing @modelcontextprotocol/server-filesystem into $fs_prefix"
    npm install --prefix "$fs_prefix" --no-audit --no-fund @modelcontextprotocol/server-filesystem
  fi
fi
mkdir -p "$out"
corpora="$repo/bench-corpora"
mkdir -p "$corpora"

# ---------------------------------------------------------------- corpora
gen() {  # gen PRESET
  if [ -f "$corpora/$1.manifest.json" ] && [ -d "$corpora/$1" ]; then
    echo "corpus $1: reusing $corpora/$1"
  else
    echo "corpus $1: generating"
    python3 "$kit/gen_corpus.py" --preset "$1" --out "$corpora/$1" --force
  fi
}
gen medium
[ $large = 1 ] && gen large

# ---------------------------------------------------------------- build
commit=$(git -C "$repo" rev-parse --short HEAD)
if [ -z "$bin" ]; then
  if [ $from_head = 1 ]; then
    snap="$repo/target/bench-head/src"
    rm -rf "$snap" && mkdir -p "$snap"
    git -C "$repo" archive HEAD | tar -x -C "$snap"
    (cd "$snap" && CARGO_TARGET_DIR="$repo/target/bench-head/target" cargo build --release --locked)
    bin="$repo/target/bench-head/target/release/rootgrep"
    built_from="git HEAD $commit (snapshot, working-tree edits excluded)"
  else
    (cd "$repo" && cargo build --release --locked)
    bin="$repo/target/release/rootgrep"
    dirty=$(git -C "$repo" status --porcelain -- src Cargo.toml Cargo.lock | head -1)
    built_from="working tree at $commit${dirty:+ (with uncommitted changes)}"
  fi
else
  built_from="given binary $bin"
fi
echo "rootgrep: $bin ($built_from)"

# ---------------------------------------------------------------- machine
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "rootgrep commit: $commit"
  echo "rootgrep built from: $built_from"
  echo "nproc: $(nproc)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "kernel: $(uname -sr)"
  echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "rg: $(rg --version | head -1)"
  echo "hyperfine: $(hyperfine --version)"
  [ $anchors = 1 ] && echo "node: $(node --version); server-filesystem: $(node -p "require('$fs_prefix/node_modules/@modelcontextprotocol/server-filesystem/package.json').version")"
  echo "k: $k"
  echo "sections: $only (large=$large anchors=$anchors)"
  echo "loadavg before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/meta.txt"
cat "$out/meta.txt"
loadmark() { echo "loadavg $1: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/meta.txt"; }

bench() {  # bench LABEL SERVER-COMMAND CORPUS CASES [extra mcp_bench args...]
  local label=$1 server=$2 corpus=$3 cases=$4; shift 4
  python3 "$kit/mcp_bench.py" --server "$server" --root "$corpus" --cases "$cases" \
    --label "$label" --json "$out/$label.json" "$@" | tee "$out/$label.md"
  loadmark "after $label"
}
fresh_settle() {  # fresh_settle LIVE-JSON: seconds for --settle (3 x time to fresh + 3, at least 5)
  python3 -c 'import json,sys
try: t = json.load(open(sys.argv[1])).get("roots_to_fresh_ms") or 20000
except OSError: t = 20000
print(max(5, round(3 * t / 1000 + 3)))' "$1"
}

# warm the page cache for both programs (untimed)
rg -n zqxjkv_rare_needle "$corpora/medium" >/dev/null || true
rg --files "$corpora/medium" >/dev/null
[ $large = 1 ] && rg --files "$corpora/large" >/dev/null

# ---------------------------------------------------------------- cold: no watcher, no index
if want cold; then
  bench medium "$bin --no-watch" "$corpora/medium" "$here/cases/medium.json" -k "$k" -w 1 --startup-runs 20 --ping-runs 100
  bench medium_cold_extra "$bin --no-watch" "$corpora/medium" "$here/cases/cold_extra.json" -k "$k" -w 1 --startup-runs 0 --ping-runs 5
  if [ $large = 1 ]; then
    bench large "$bin --no-watch" "$corpora/large" "$here/cases/large.json" -k "$k" -w 1 --startup-runs 3 --ping-runs 20
    bench large_cold_extra "$bin --no-watch" "$corpora/large" "$here/cases/cold_large_extra.json" -k "$k" -w 1 --startup-runs 0 --ping-runs 5
  fi
fi

# ---------------------------------------------------------------- first call in a fresh server
# One server per sample (watcher on, as a host starts it), no warm-up call: the grep is the first
# request after the roots exchange, before the index is fresh.
if want first; then
  rm -f "$out"/first_call.*.json
  for i in $(seq 1 "$k"); do
    for c in 'grep rare literal -l' 'grep common word content'; do
      tag=$(echo "$c" | tr -c 'a-z0-9\n' '_')
      python3 "$kit/mcp_bench.py" --server "$bin" --root "$corpora/medium" \
        --cases "$here/cases/first_call.json" --only "^$c\$" -k 1 -w 0 --startup-runs 0 \
        --ping-runs 1 --label "first call $i" --json "$out/first_call.$tag.$i.json" >/dev/null
    done
  done
  loadmark "after first"
fi

# ---------------------------------------------------------------- one-shot CLI vs rg (fresh process each)
if want oneshot; then
  ( cd "$corpora/medium" &&
    hyperfine -N --warmup 2 --runs "$k" --export-json "$out/oneshot.json" --export-markdown "$out/oneshot.md" \
      "$bin call grep '{\"pattern\":\"zqxjkv_rare_needle\"}' $corpora/medium" \
      "rg -l zqxjkv_rare_needle $corpora/medium" \
      "$bin call glob '{\"pattern\":\"**/*.rs\",\"sort\":\"path\"}' $corpora/medium" \
      "rg --files -g *.rs $corpora/medium" )
  loadmark "after oneshot"
fi

# ---------------------------------------------------------------- live index: time to fresh, RSS, completion
if want live; then
  python3 "$here/live_probe.py" --server "$bin" --root "$corpora/medium" --json "$out/live_medium.json" \
    --n 300 --n-list 20 --complete '{ROOTREL}/' --complete '{ROOTREL}/src/' --complete '{ROOTREL}/src/ga' \
    | tee "$out/live_medium.md"
  if [ $large = 1 ]; then
    # completion on the 200k-file tree: the root's children, a 297-entry directory, partial
    # names at two depths, a deep directory, and the root itself typed partially
    python3 "$here/live_probe.py" --server "$bin" --root "$corpora/large" --json "$out/live_large.json" \
      --n 1000 --n-list 20 \
      --complete '{ROOTREL}/' --complete '{ROOTREL}/src/' --complete '{ROOTREL}/src/pa' \
      --complete '{ROOTREL}/src/page/co' --complete '{ROOTREL}/packages/lock/result/' \
      --complete "$(dirname "$corpora/large" | sed 's#^/##')/la" \
      | tee "$out/live_large.md"
  fi
  loadmark "after live"
fi

# ---------------------------------------------------------------- warm: watcher + index, index fresh
if want warm; then
  s=$(fresh_settle "$out/live_medium.json")
  bench warm_medium "$bin" "$corpora/medium" "$here/cases/warm_medium.json" -k "$k" -w 1 --startup-runs 0 --ping-runs 20 --settle "$s"
  if [ $large = 1 ]; then
    s=$(fresh_settle "$out/live_large.json")
    bench warm_large "$bin" "$corpora/large" "$here/cases/warm_large.json" -k "$k" -w 1 --startup-runs 0 --ping-runs 20 --settle "$s"
  fi
fi

# ---------------------------------------------------------------- anchors: the official filesystem server
# Same client, same tree, same tasks; two sessions one after the other (not interleaved), so the
# ratio is of medians. The official server gets the corpus as its allowed directory (argument)
# and, like rootgrep, as the client's root. Nothing goes to the network once it is installed.
if [ $anchors = 1 ] && want anchors; then
  vars=(--var FILE_S=src/timer_cache/token_node.rs --var FILE_L=services/retry_color/nonce_node/column/digest.rs --var DIR=src)
  bench official_medium "node $fs_js {ROOT}" "$corpora/medium" "$here/cases/official_fs.json" "${vars[@]}" \
    -k "$k" -w 1 --startup-runs 10 --ping-runs 50 --timeout 120
  s=$(fresh_settle "$out/live_medium.json")
  bench rootgrep_official_medium "$bin" "$corpora/medium" "$here/cases/rootgrep_vs_official.json" "${vars[@]}" \
    -k "$k" -w 1 --startup-runs 0 --ping-runs 5 --settle "$s"
  if [ $large = 1 ]; then
    lvars=(--var FILE_S=src/rollback/column_cache.rs --var FILE_L=src/channel/gauge/filter_migration/response_tax/role_response.rs --var DIR=src)
    # the official name search walks every entry (no ignore rules, realpath per entry): fewer runs
    bench official_large "node $fs_js {ROOT}" "$corpora/large" "$here/cases/official_fs.json" "${lvars[@]}" \
      -k 3 -w 0 --startup-runs 0 --ping-runs 5 --timeout 300
    s=$(fresh_settle "$out/live_large.json")
    bench rootgrep_official_large "$bin" "$corpora/large" "$here/cases/rootgrep_vs_official.json" "${lvars[@]}" \
      -k "$k" -w 1 --startup-runs 0 --ping-runs 5 --settle "$s"
  fi
fi

loadmark "after"
python3 "$here/summarize.py" "$out" | tee "$out/summary.md"
