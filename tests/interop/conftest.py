"""Fixtures for the interop suite: the rootgrep binary and a small temp workspace."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def anyio_backend() -> str:
    # The SDK runs on anyio; asyncio is what hosts built on it use.
    return "asyncio"


@pytest.fixture(scope="session")
def rootgrep_bin() -> str:
    """The server under test: $ROOTGREP_BIN, or target/debug/rootgrep in this repo."""
    value = os.environ.get("ROOTGREP_BIN")
    path = Path(value).resolve() if value else REPO_ROOT / "target" / "debug" / "rootgrep"
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"rootgrep binary not found at {path}: run `cargo build` or set ROOTGREP_BIN", pytrace=False)
    return str(path)


@dataclass
class Workspace:
    root: Path  # the workspace the client declares as its root
    outside: Path  # a sibling directory outside every root
    tmp: Path  # holds both; never a root itself


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    base = tmp_path.resolve()
    root = base / "workspace"
    (root / "src").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "README.md").write_text("# Demo\n\nA tiny project.\n")
    (root / "src" / "main.rs").write_text('fn main() {\n    println!("hello");\n}\n')
    (root / "src" / "lib.rs").write_text("pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n")
    (root / "docs" / "guide.md").write_text("Guide\n")
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    (outside / "notes.txt").write_text("more notes\n")
    return Workspace(root=root, outside=outside, tmp=base)
