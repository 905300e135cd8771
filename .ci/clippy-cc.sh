#!/bin/sh
# For `cargo clippy --target *-apple-darwin` on a Linux host only: nothing is linked, so the
# C grammars' objects only need to exist. Preprocessing (cc-rs's compiler detection) goes
# to the host cc; a compile creates its `-o` file empty. The tree-sitter grammars are C,
# and the host's gcc refuses cc-rs's Apple flags (`-arch`, `-mmacosx-version-min`), so:
#   CC_x86_64_apple_darwin=.ci/clippy-cc.sh CC_aarch64_apple_darwin=.ci/clippy-cc.sh \
#     cargo clippy --target x86_64-apple-darwin --all-targets -- -D warnings
case "$1" in -E) exec cc "$@" ;; esac
out=""
prev=""
for arg in "$@"; do
  case "$prev" in -o) out="$arg" ;; esac
  case "$arg" in -o?*) out="${arg#-o}" ;; -\?) exit 1 ;; esac
  prev="$arg"
done
[ -n "$out" ] && : > "$out"
exit 0
