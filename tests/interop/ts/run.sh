#!/usr/bin/env bash
# Interop suite: the official MCP TypeScript SDK client drives the rootgrep binary over stdio.
#
#   tests/interop/ts/run.sh [NODE_TEST_ARGS...]     (from any directory)
#
# Needs node (>= 20) and npm, and the npm registry. Installs the SDK version pinned in
# package-lock.json (npm ci) into this folder's node_modules, then runs interop.test.mjs with
# Node's built-in test runner. The server under test is $ROOTGREP_BIN (a relative path is
# taken from the current directory), or target/debug/rootgrep in this repo. Exits non-zero
# when a test fails.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [[ -n "${ROOTGREP_BIN:-}" && "$ROOTGREP_BIN" != /* ]]; then
    ROOTGREP_BIN="$PWD/$ROOTGREP_BIN"
    export ROOTGREP_BIN
fi

cd "$here"
npm ci --no-audit --no-fund --loglevel=error >/dev/null
exec node --test "$@" interop.test.mjs
