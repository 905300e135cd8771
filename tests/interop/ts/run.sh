#!/usr/bin/env bash
# Interop suite: the official MCP TypeScript SDK client drives the rootgrep binary over stdio.
#
#   tests/interop/ts/run.sh [NODE_TEST_ARGS...]     (from any directory)
#
# Needs node (>= 20) and npm, and the npm registry. Installs the SDK version pinned in
# package-lock.json (npm ci) into this folder's node_modules, then runs interop.test.mjs with
# Node's built-in test runner. The server under test is $ROOTGREP_BIN (a relative path is
# taken from the current directory), or target/debug/rootgrep in this repo. Exits non-zero
# when a test fails. Runs under Git Bash on Windows too (paths handed to node in C:/ form).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [[ -n "${ROOTGREP_BIN:-}" ]]; then
    if [[ "$ROOTGREP_BIN" != /* && ! "$ROOTGREP_BIN" =~ ^[A-Za-z]:[/\\] ]]; then
        ROOTGREP_BIN="$PWD/$ROOTGREP_BIN"
    fi
    # Git Bash's /c/x paths mean nothing to a Windows node: hand it C:/x.
    command -v cygpath >/dev/null 2>&1 && ROOTGREP_BIN="$(cygpath -m "$ROOTGREP_BIN")"
    export ROOTGREP_BIN
fi

cd "$here"
npm ci --no-audit --no-fund --loglevel=error >/dev/null
exec node --test "$@" interop.test.mjs
