#!/usr/bin/env bash
# rootgrep beyond Linux: clippy for macOS (x86_64, aarch64) and Windows, a Windows build
# with MinGW, and the wire tests run against the Windows binary under Wine.
#
# Installs what it needs (rustup targets; gcc-mingw-w64-x86-64 and wine64 with apt-get,
# as root). No macOS linker exists here, so macOS is linted and type-checked, not linked.
# Wine 8 (Debian) lacks bcryptprimitives.dll, whose ProcessPrng Rust's std imports: a
# small shim DLL built here forwards it to advapi32's RtlGenRandom.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
work="$target_dir/platforms"
mkdir -p "$work"

echo "== platforms: toolchains"
# No macOS C toolchain here: the tree-sitter grammars (C) are "compiled" to empty objects for
# the Apple targets, which clippy never links (see .ci/clippy-cc.sh).
export CC_x86_64_apple_darwin="$PWD/.ci/clippy-cc.sh" CC_aarch64_apple_darwin="$PWD/.ci/clippy-cc.sh"
for target in x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-gnu; do
    rustup target list --installed | grep -qx "$target" || rustup target add "$target"
done
need=()
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || need+=(gcc-mingw-w64-x86-64)
[ -x /usr/lib/wine/wine64 ] || need+=(wine64)
if [ ${#need[@]} -gt 0 ]; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}"
fi

for target in x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-gnu; do
    echo "== clippy --target $target"
    cargo clippy --locked --target "$target" --all-targets -- -D warnings
    # CI (ROOTGREP_CI_FREE_DISK=1) frees each macOS target's output once it is linted; a
    # developer's run keeps it warm. The Windows output is reused by the build below.
    if [ "${ROOTGREP_CI_FREE_DISK:-0}" = 1 ] && [ "$target" != x86_64-pc-windows-gnu ]; then
        rm -rf "${target_dir:?}/$target"
        df -h "$target_dir" | tail -1
    fi
done

echo "== build for x86_64-pc-windows-gnu"
cargo build --locked --target x86_64-pc-windows-gnu
ls -l "$target_dir/x86_64-pc-windows-gnu/debug/rootgrep.exe"

echo "== Wine: ProcessPrng shim and runner"
cat > "$work/prng-shim.c" <<'C'
/* bcryptprimitives.dll for Wine builds without one: Rust's std imports ProcessPrng from
   it. Forwarded to advapi32's RtlGenRandom (SystemFunction036). */
#include <windows.h>
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
C
x86_64-w64-mingw32-gcc -O2 -shared -o "$work/bcryptprimitives.dll" "$work/prng-shim.c" -ladvapi32
cat > "$work/wine-runner.sh" <<'SH'
#!/usr/bin/env bash
# Cargo runner: a Windows executable under Wine, the shim DLL beside it and beside the
# rootgrep.exe that the wire tests start (one directory up from deps/).
set -euo pipefail
exe="$1"
shift
# Tests that Wine cannot model (it resolves handles through stored Unix paths) look for this.
export ROOTGREP_UNDER_WINE=1
dir="$(cd "$(dirname "$exe")" && pwd)"
for d in "$dir" "$dir/.."; do
    cp -u "$ROOTGREP_PRNG_SHIM" "$d/bcryptprimitives.dll"
done
exec /usr/lib/wine/wine64 "$exe" "$@"
SH
chmod +x "$work/wine-runner.sh"
export ROOTGREP_PRNG_SHIM="$work/bcryptprimitives.dll"
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$work/wine-runner.sh"
export WINEDEBUG=-all
export WINEPREFIX="$work/wineprefix"
# First start creates the prefix (about half a minute); no display is needed.
/usr/lib/wine/wine64 cmd /c exit >/dev/null 2>&1 || true

echo "== Wine: the binary answers initialize over pipes"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"ci","version":"0"}}}' \
    | "$work/wine-runner.sh" "$target_dir/x86_64-pc-windows-gnu/debug/rootgrep.exe" . \
    | head -c 300
echo

# Tests skipped under Wine, one per line: a name filter, then why.
skip_args() {
    local args=() name reason
    while read -r name reason; do
        [ -n "$name" ] && [ -n "$reason" ] && args+=(--skip "$name")
    done
    printf '%s\n' "${args[@]}"
}

echo "== Wine: unit tests (the platform-independent ones and Windows path handling)"
mapfile -t lib_skips < <(skip_args <<'SKIPS'
files::write::tests::readers_never_see_a_partial_file Wine refuses a rename over a file another handle has open (no POSIX-semantics FileRenameInfoEx), and readers see it missing meanwhile
watch::tests::a_root_gone_for_a_while_is_reported_and_watched_when_it_returns the watcher's open handle keeps a deleted root delete-pending (Windows semantics): it cannot be recreated at once
watch::tests::a_root_replaced_is_watched_again same: recreating a root the watcher holds fails with ERROR_ALREADY_EXISTS
watch::tests::a_file_root_saved_while_it_is_watched_again_is_reported Wine refuses the rename over a file root while the watcher holds the file open (no POSIX-semantics rename), as for readers_never_see_a_partial_file
watch::tests::files_with_events_of_their_own_are_not_announced_again ReadDirectoryChangesW (Wine) delivers a new directory's file events after the directory settled, so those files are announced with it and again by their own late events (Linux orders them)
SKIPS
)
cargo test --locked --target x86_64-pc-windows-gnu --lib -- "${lib_skips[@]}"

echo "== Wine: wire tests"
# Modules that need Unix to compile (symlinks, FIFOs, sockets, rename EXCHANGE, permission
# bits) are built for Unix only (tests/it/main.rs). Of the rest, these are not run here (each
# runs unskipped on the Windows runner of .github/workflows/ci.yml):
mapfile -t wire_skips < <(skip_args <<'SKIPS'
hostile_live::reading_the_whole_tree_does_not_wake_an_idle_server under Wine the idle server's CPU time (GetProcessTimes, tests/it/probe.rs) grows while another process reads the tree, which Linux's inotify mask prevents; not investigated on Windows
hostile_live::a_root_directory_replaced_is_watched_and_indexed_again the watcher's open handle keeps a deleted root delete-pending (Windows semantics): it cannot be recreated at once
sharing::small_requests_answer_while_long_searches_hold_the_pool under Wine the server's CPU time does not settle within 5 s of cancelling its long greps (not investigated on Windows)
crash::sigkill_during_writes_leaves_every_file_whole Wine refuses a rename over a file another handle has open (no POSIX-semantics rename)
read::read_file_on_a_fifo_fails_at_once needs mkfifo
roots::a_deleted_root_is_reported_missing the watcher's open handle keeps a deleted root delete-pending (Windows semantics): it still exists until the watch lets go
progress::resources_list_reports_progress under Wine the listing's walk sent one progress notification in a 1.2 s call where Linux sends one every 100 ms (not investigated on a real Windows machine)
over_time::a_subscription_follows_its_path_across_a_directory_rename Wine reports the rename of a watched directory differently (old URI notified)
over_time::listen_stream_list_changed_is_spaced_and_never_loses_the_tail in full parallel Wine runs the tail of a 3-second burst of creations was sometimes not reported within 15 s, with or without the symbol index (passes alone); Linux runs it
SKIPS
)
# Wine itself sometimes fails to start a process (Windows error 1359 from CreateProcess,
# seen once in many runs), and under the full suite's load a few timing-bound tests have
# failed there once and passed again: the tests that failed are run once more, alone (all
# of them when the run ended without naming any), and both runs are printed. Each test must
# pass in one of the two runs.
wire_log="$work/wine-wire.log"
if ! cargo test --locked --target x86_64-pc-windows-gnu --test it -- "${wire_skips[@]}" 2>&1 \
    | tee "$wire_log"; then
    # libtest ends with "failures:" and the failed tests' names, indented by four spaces.
    mapfile -t failed < <(awk '/^failures:$/ { names = "" ; inside = 1; next }
        inside && /^    [A-Za-z0-9_:]+$/ { names = names $1 "\n"; next }
        inside && !/^$/ { inside = 0 }
        END { printf "%s", names }' "$wire_log")
    if [ ${#failed[@]} -gt 0 ]; then
        echo "== Wine: ${#failed[@]} wire test(s) failed; running them once more, alone"
        cargo test --locked --target x86_64-pc-windows-gnu --test it -- --exact "${failed[@]}"
    else
        echo "== Wine: wire tests failed without naming a test; running them all once more"
        cargo test --locked --target x86_64-pc-windows-gnu --test it -- "${wire_skips[@]}"
    fi
fi

echo "== platforms: done in $(( $(date +%s) - start )) s"
