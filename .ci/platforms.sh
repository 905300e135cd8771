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
work="$PWD/target/platforms"
mkdir -p "$work"

echo "== platforms: toolchains"
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
done

echo "== build for x86_64-pc-windows-gnu"
cargo build --locked --target x86_64-pc-windows-gnu
ls -l target/x86_64-pc-windows-gnu/debug/rootgrep.exe

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
    | "$work/wine-runner.sh" target/x86_64-pc-windows-gnu/debug/rootgrep.exe . \
    | head -c 300
echo

echo "== Wine: unit tests (the platform-independent ones and Windows path handling)"
cargo test --locked --target x86_64-pc-windows-gnu --lib -- ${WINE_LIB_SKIP:-}

echo "== Wine: wire tests"
# Modules that need Unix (symlinks, FIFOs, sockets, /proc, ulimit, rename EXCHANGE) are
# compiled for Unix only (tests/it/main.rs); what else Wine cannot do is skipped here by
# name, each with its reason in WINE_SKIPS below.
skips=()
while read -r name _reason; do
    [ -n "$name" ] && skips+=(--skip "$name")
done <<'SKIPS'
SKIPS
cargo test --locked --target x86_64-pc-windows-gnu --test it -- "${skips[@]}"

echo "== platforms: done in $(( $(date +%s) - start )) s"
