#!/usr/bin/env bash
# Interop suite: the official MCP Python SDK drives the rootgrep binary over stdio.
#
#   tests/interop/run.sh [PYTEST_ARGS...]
#
# Needs python3 (>= 3.10) with pip, and PyPI. Creates (or reuses) a venv in
# target/interop-venv, installs requirements.txt into it when that file changed, and runs
# pytest on this folder. The server under test is $ROOTGREP_BIN, or target/debug/rootgrep
# (built with cargo if it is missing). Exits non-zero when a test fails. Runs under Git Bash
# on Windows too (the venv's interpreter is Scripts/python.exe there, and paths handed to
# Windows programs are given in their C:/ form).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="$repo/target/interop-venv"
requirements="$here/requirements.txt"
python="${PYTHON:-python3}"

# An absolute path: /x, or C:/x and C:\x on Windows.
absolute() { [[ "$1" == /* || "$1" =~ ^[A-Za-z]:[/\\] ]]; }

# The server under test.
if [[ -n "${ROOTGREP_BIN:-}" ]]; then
    absolute "$ROOTGREP_BIN" || ROOTGREP_BIN="$PWD/$ROOTGREP_BIN"
else
    exe=rootgrep
    [[ "${OS:-}" == Windows_NT ]] && exe=rootgrep.exe
    ROOTGREP_BIN="${CARGO_TARGET_DIR:-$repo/target}/debug/$exe"
    absolute "$ROOTGREP_BIN" || ROOTGREP_BIN="$repo/$ROOTGREP_BIN"
    if [[ ! -x "$ROOTGREP_BIN" ]]; then
        echo "interop: $ROOTGREP_BIN is missing; building it" >&2
        (cd "$repo" && cargo build --quiet --bin rootgrep)
    fi
fi
# Git Bash's /c/x paths mean nothing to a Windows python: hand it C:/x.
command -v cygpath >/dev/null 2>&1 && ROOTGREP_BIN="$(cygpath -m "$ROOTGREP_BIN")"
export ROOTGREP_BIN

# The venv's interpreter: bin/python, or Scripts/python.exe on Windows.
venv_python() {
    if [[ -x "$venv/Scripts/python.exe" ]]; then echo "$venv/Scripts/python.exe"; else echo "$venv/bin/python"; fi
}

# The venv: reuse it while its interpreter works.
if ! "$(venv_python)" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
        echo "interop: $python is missing or older than 3.10 (the MCP SDK needs >= 3.10)" >&2
        exit 2
    fi
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    # Without the ensurepip module (Debian's python3 lacking python3-venv), make the venv
    # without pip and install into it with the system pip instead.
    if ! "$python" -m venv "$venv" >/dev/null 2>&1; then
        rm -rf "$venv"
        "$python" -m venv --without-pip "$venv"
    fi
fi
vpython="$(venv_python)"
if "$vpython" -m pip --version >/dev/null 2>&1; then
    pip=("$vpython" -m pip)
else
    pip=("$python" -m pip --python "$vpython")
fi

# Install the pinned requirements when they changed since the last install.
stamp="$venv/.interop-requirements"
if ! cmp -s "$requirements" "$stamp"; then
    PIP_DISABLE_PIP_VERSION_CHECK=1 "${pip[@]}" install --quiet -r "$requirements"
    cp "$requirements" "$stamp"
fi

cd "$repo"
export PYTHONDONTWRITEBYTECODE=1
exec "$vpython" -m pytest -q "$here" "$@"
