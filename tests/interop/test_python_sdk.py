"""Interop: the official MCP Python SDK (mcp 2.x) drives rootgrep over stdio, as a host would.

Each test launches the real binary through `mcp.client.Client(StdioServerParameters(...))`
with the SDK's default connect mode ("auto": a `server/discover` probe, then the
`initialize` handshake), answers the server's `roots/list` and `elicitation/create`
requests from Python callbacks, and checks what a user of the tools relies on.

Every await is bounded (`anyio.fail_after`), and each test has an overall budget, so a
server that stops answering fails the test instead of hanging the run.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.anyio

STEP = 10.0  # seconds for any single request
TEST_BUDGET = 30.0  # seconds for a whole test, server start and shutdown included
POLL = 5.0  # seconds to wait for an asynchronous effect (roots re-fetch, cancellation)

READ_ONLY_TOOLS = {"list_roots", "file_info", "read_file", "read_files", "list_directory", "directory_tree"}
WRITE_TOOLS = {"write_file", "edit_file", "create_directory", "move_file"}
LATER_READ_ONLY_TOOLS = {"grep", "glob", "search", "symbols", "outline", "references"}  # read-only when listed
SEVERITY = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

T = TypeVar("T")


# --------------------------------------------------------------------------------------
# The host: roots, elicitation answers, log notifications, transport faults
# --------------------------------------------------------------------------------------

Answer = str | dict[str, Any] | Callable[[types.ElicitRequestParams], Awaitable[types.ElicitResult]]


class Host:
    """What the client side declares and answers; records what the server asked."""

    def __init__(self, roots: Sequence[Path] = (), answers: Sequence[Answer] = ()) -> None:
        self.roots: list[Path] = list(roots)
        self.answers: list[Answer] = list(answers)
        self.questions: list[types.ElicitRequestParams] = []
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.roots_requests = 0
        self.faults: list[Exception] = []

    async def list_roots(self, context: Any) -> types.ListRootsResult:
        self.roots_requests += 1
        return types.ListRootsResult(roots=[types.Root(uri=p.as_uri(), name=p.name) for p in self.roots])

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.questions.append(params)
        # An unexpected question is recorded (tests count questions) and dismissed.
        answer: Answer = self.answers.pop(0) if self.answers else "cancel"
        if callable(answer):
            return await answer(params)
        if isinstance(answer, dict):
            return types.ElicitResult(action="accept", content=answer)
        return types.ElicitResult(action=answer)  # "decline" or "cancel"

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def message(self, message: Any) -> None:
        # Transport-level exceptions (e.g. a stdout line that is not JSON-RPC) arrive here.
        if isinstance(message, Exception):
            self.faults.append(message)


@asynccontextmanager
async def connect(
    rootgrep_bin: str,
    host: Host | None = None,
    *,
    roots: bool = True,
    elicitation: bool = True,
    args: Sequence[str] = (),
    cwd: Path | None = None,
    mode: str = "legacy",
    sampling: Callable[..., Awaitable[Any]] | None = None,
) -> AsyncIterator[Client]:
    """Launch rootgrep over stdio and connect the SDK client, as a host would."""
    host = host or Host()
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        params = StdioServerParameters(command=rootgrep_bin, args=list(args), cwd=str(cwd) if cwd else None)
        client = Client(
            params,
            mode=mode,
            list_roots_callback=host.list_roots if roots else None,
            elicitation_callback=host.elicit if elicitation else None,
            sampling_callback=sampling,
            logging_callback=host.log,
            message_handler=host.message,
        )
        try:
            try:
                async with client:
                    yield client
            except BaseExceptionGroup as group:
                # The SDK's task groups wrap a failing assertion; report the assertion itself.
                raise sole_exception(group) from None
            assert not host.faults, f"transport faults (stdout must carry only JSON-RPC): {host.faults!r}"
        finally:
            errlog.seek(0)
            tail = errlog.read()[-4000:]
            if tail:
                print(f"--- rootgrep stderr ---\n{tail}")  # shown by pytest only when a test fails


def sole_exception(group: BaseExceptionGroup) -> BaseException:
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


async def bounded(awaitable: Awaitable[T], seconds: float = STEP) -> T:
    with anyio.fail_after(seconds):
        return await awaitable


async def call(client: Client, tool: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
    return await bounded(client.call_tool(tool, arguments or {}))


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


def ok(result: types.CallToolResult) -> str:
    """The text of a successful tool result (fails the test with the server's message otherwise)."""
    assert not result.is_error, f"tool error: {text_of(result)}"
    return text_of(result)


def err(result: types.CallToolResult) -> str:
    """The text of a tool error result."""
    assert result.is_error, f"expected a tool error, got: {text_of(result)}"
    return text_of(result)


async def list_roots(client: Client) -> dict[str, Any]:
    result = await call(client, "list_roots")
    ok(result)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def root_paths(listing: dict[str, Any]) -> list[str]:
    return [root["path"] for root in listing["roots"]]


async def wait_for_roots(client: Client, expected: list[str]) -> dict[str, Any]:
    """Poll list_roots until it shows exactly `expected` (the server re-fetches asynchronously)."""
    listing: dict[str, Any] = {}
    with anyio.move_on_after(POLL):
        while True:
            listing = await list_roots(client)
            if root_paths(listing) == expected:
                return listing
            await anyio.sleep(0.05)
    pytest.fail(f"list_roots still shows {root_paths(listing)} after {POLL}s; expected {expected}")


async def wait_until(predicate: Callable[[], bool], what: str, seconds: float = POLL) -> None:
    with anyio.move_on_after(seconds):
        while not predicate():
            await anyio.sleep(0.02)
        return
    pytest.fail(f"timed out after {seconds}s waiting for {what}")


def relative(ws, path) -> str:
    """How an answer names `path` under the one root: relative to it."""
    return str(path.relative_to(ws.root))


def absolute(structured: dict[str, Any], path: str) -> str:
    """A path of a structured result made absolute: joined to its `root` when it has one."""
    root = structured.get("root")
    return str(Path(root) / path) if root else path


def numbered(lines: Sequence[str], first: int = 1) -> list[str]:
    """`cat -n` style rows, as read_file renders them."""
    return [f"{n}\t{line}" for n, line in enumerate(lines, start=first)]


# --------------------------------------------------------------------------------------
# 1. Lifecycle
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_initialize_handshake(rootgrep_bin, ws, mode):
    # "auto" (the SDK default) first probes `server/discover`; a server that left the probe
    # unanswered would stall the connect for the SDK's 10 s probe timeout; a prompt answer
    # takes milliseconds, so 3 s leaves room for a loaded machine.
    with anyio.fail_after(TEST_BUDGET):
        started = anyio.current_time()
        async with connect(rootgrep_bin, Host([ws.root]), mode=mode) as client:
            connect_seconds = anyio.current_time() - started
            assert connect_seconds < 3.0, f"connect took {connect_seconds:.1f}s"

            if mode == "auto":
                # The discover probe finds 2026-07-28: the SDK goes stateless, no handshake.
                assert client.protocol_version == "2026-07-28"
            else:
                assert client.protocol_version == "2025-11-25"
                init = client.session.initialize_result
                assert init is not None, "expected the initialize handshake"
                assert init.protocol_version == "2025-11-25"
            assert client.server_info is not None and client.server_info.name == "rootgrep"
            assert client.server_info.version
            caps = client.server_capabilities
            assert caps.tools is not None
            assert caps.logging is not None
            assert isinstance(client.instructions, str) and client.instructions.strip()

            if mode != "auto":  # 2026-07-28 has no ping
                await bounded(client.send_ping())


# --------------------------------------------------------------------------------------
# 2. Roots
# --------------------------------------------------------------------------------------


async def test_roots_from_client_then_list_changed(rootgrep_bin, ws):
    other = ws.tmp / "other project"
    other.mkdir()
    (other / "only_here.txt").write_text("in the other project\n")
    host = Host([ws.root])
    with anyio.fail_after(TEST_BUDGET):
        # No elicitation: a path outside the roots is refused outright, which makes the
        # boundary observable.
        async with connect(rootgrep_bin, host, elicitation=False, cwd=ws.tmp) as client:
            # The first call right after connect already sees the client's roots (a call
            # that arrives before the roots/list answer waits for it).
            listing = await list_roots(client)
            assert listing["source"] == "client"
            assert root_paths(listing) == [str(ws.root)]
            assert listing["roots"][0]["path"] == str(ws.root)
            assert "missing" not in listing["roots"][0]
            assert host.roots_requests >= 1
            assert str(ws.root) in ok(await call(client, "list_roots"))

            # The user opens another folder instead: the new set replaces the old one.
            host.roots = [other]
            await bounded(client.send_roots_list_changed())
            listing = await wait_for_roots(client, [str(other)])
            assert listing["source"] == "client"

            # The swap governs access, not just the listing: relative paths resolve
            # against the new root, and the old root is now outside.
            ok_text = ok(await call(client, "read_file", {"path": "only_here.txt"}))
            assert "in the other project" in ok_text
            refused = err(await call(client, "read_file", {"path": str(ws.root / "README.md")}))
            assert str(ws.root / "README.md") in refused

            # Two roots at once, in the client's order.
            host.roots = [ws.root, other]
            await bounded(client.send_roots_list_changed())
            await wait_for_roots(client, [str(ws.root), str(other)])

            # An empty set means no access: the working directory is never served in its
            # place, and tools that work on the roots say so.
            host.roots = []
            await bounded(client.send_roots_list_changed())
            listing = await wait_for_roots(client, [])
            assert listing["source"] == "client"
            refused = err(await call(client, "grep", {"pattern": "Demo"}))
            assert "no workspace roots" in refused


async def test_root_uri_is_percent_decoded(rootgrep_bin, ws):
    # Hosts send roots as URIs: spaces and non-ASCII names arrive percent-encoded.
    odd = ws.tmp / "my wörk space"
    odd.mkdir()
    (odd / "file name.txt").write_text("decoded\n")
    assert "%20" in odd.as_uri() and "%C3%B6" in odd.as_uri()
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([odd]), elicitation=False) as client:
            listing = await list_roots(client)
            assert root_paths(listing) == [str(odd)]
            assert "missing" not in listing["roots"][0]
            text = ok(await call(client, "read_file", {"path": "file name.txt"}))
            assert text.splitlines()[0] == numbered(["decoded"])[0]


async def test_missing_root_is_kept_and_reported(rootgrep_bin, ws):
    missing = ws.tmp / "not-created-yet"
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root, missing]), elicitation=False) as client:
            listing = await list_roots(client)
            assert root_paths(listing) == [str(ws.root), str(missing)]
            assert [root.get("missing", False) for root in listing["roots"]] == [False, True]
            assert any(str(missing) in note for note in listing["notes"])


# --------------------------------------------------------------------------------------
# 3. tools/list
# --------------------------------------------------------------------------------------


async def test_tools_list(rootgrep_bin, ws):
    # Every tool (the default set leaves a few out; the wire tests check which).
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root]), args=["--tools", "all"]) as client:
            listing = await bounded(client.list_tools())
    tools = {tool.name: tool for tool in listing.tools}
    assert len(tools) == len(listing.tools), "duplicate tool names"
    missing = (READ_ONLY_TOOLS | WRITE_TOOLS) - tools.keys()
    assert not missing, f"tools missing from tools/list: {sorted(missing)}"

    for name, tool in tools.items():
        assert tool.description and tool.description.strip(), f"{name}: no description"
        schema = tool.input_schema
        assert schema.get("type") == "object", f"{name}: inputSchema type is {schema.get('type')!r}"
        properties = schema.get("properties", {})
        for param, spec in properties.items():
            assert spec.get("description"), f"{name}.{param}: parameter has no description"
        for param in schema.get("required", []):
            assert param in properties, f"{name}: required {param!r} is not a property"
        if tool.output_schema is not None:
            assert tool.output_schema.get("type") == "object", f"{name}: outputSchema root must be an object"

        hints = tool.annotations
        assert hints is not None, f"{name}: no annotations"
        assert hints.open_world_hint is False, f"{name}: openWorldHint should be false (local files only)"
        if name in READ_ONLY_TOOLS | LATER_READ_ONLY_TOOLS:
            assert hints.read_only_hint is True, f"{name}: readOnlyHint should be true"
        if name in WRITE_TOOLS:
            assert hints.read_only_hint is not True, f"{name}: a write tool must not claim readOnlyHint"

    assert "path" in tools["read_file"].input_schema["required"]
    assert set(tools["move_file"].input_schema["required"]) == {"source", "destination"}
    assert tools["write_file"].annotations.destructive_hint is not False  # overwrites files
    assert tools["create_directory"].annotations.destructive_hint is False


# --------------------------------------------------------------------------------------
# 4. Each tool on a temp workspace
# --------------------------------------------------------------------------------------


async def test_read_file(rootgrep_bin, ws):
    readme = ws.root / "README.md"
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root])) as client:
            text = ok(await call(client, "read_file", {"path": str(readme)}))
            assert text.splitlines() == numbered(["# Demo", "", "A tiny project."])

            # A relative path and a file:// URI name the same file; results are the same.
            assert ok(await call(client, "read_file", {"path": "README.md"})) == text
            assert ok(await call(client, "read_file", {"path": readme.as_uri()})) == text

            # A window, and a pointer to the rest.
            window = ok(await call(client, "read_file", {"path": str(readme), "offset": 2, "limit": 1}))
            assert window.splitlines()[0] == numbered([""], first=2)[0]
            assert numbered(["A tiny project."], first=3)[0] not in window
            assert "offset=3" in window

            plain = ok(await call(client, "read_file", {"path": str(readme), "line_numbers": False}))
            assert plain.startswith("# Demo\n\nA tiny project.\n")

            missing = err(await call(client, "read_file", {"path": str(ws.root / "nope.txt")}))
            assert str(ws.root / "nope.txt") in missing


async def test_read_files_reports_failures_inline(rootgrep_bin, ws):
    main_rs, missing, readme = ws.root / "src" / "main.rs", ws.root / "src" / "gone.rs", ws.root / "README.md"
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root])) as client:
            text = ok(await call(client, "read_files", {"paths": [str(main_rs), str(missing), str(readme)]}))
    for row in numbered(["fn main() {", '    println!("hello");', "}"]):
        assert row in text
    assert numbered(["# Demo"])[0] in text
    # Each file is introduced by its path (relative to the one root), in the order asked;
    # the failure is named inline and the files after it still come back.
    headers = [f"==> {relative(ws, path)} <==" for path in (main_rs, missing, readme)]
    assert text.index(headers[0]) < text.index(headers[1]) < text.index(headers[2]) < text.index("# Demo")


async def test_read_files_names_files_relative_to_the_one_root(rootgrep_bin, ws):
    readme, main_rs = ws.root / "README.md", ws.root / "src" / "main.rs"
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root])) as client:
            text = ok(await call(client, "read_files", {"paths": ["README.md", main_rs.as_uri()]}))
    headers = [line for line in text.splitlines() if line.startswith("==> ")]
    assert headers == [f"==> {relative(ws, readme)} <==", f"==> {relative(ws, main_rs)} <=="]


async def test_file_info(rootgrep_bin, ws):
    readme = ws.root / "README.md"
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root])) as client:
            result = await call(client, "file_info", {"path": str(readme)})
            text = ok(result)
            info = result.structured_content
            assert info["type"] == "file"
            assert info["path"] == str(readme)
            assert info["size"] == readme.stat().st_size
            assert info["lines"] == 3
            assert str(readme) in text

            result = await call(client, "file_info", {"path": "src"})
            ok(result)
            assert result.structured_content["type"] == "directory"
            assert result.structured_content["path"] == str(ws.root / "src")

            assert str(ws.root / "nope") in err(await call(client, "file_info", {"path": str(ws.root / "nope")}))


async def test_list_directory(rootgrep_bin, ws):
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root])) as client:
            result = await call(client, "list_directory", {"path": str(ws.root)})
            text = ok(result)
            default = await call(client, "list_directory")  # no path: each root
    directories = result.structured_content["directories"]
    assert len(directories) == 1
    assert directories[0]["path"] == str(ws.root)
    # A name alone when there is nothing else to say; a directory's ends with "/".
    entries = directories[0]["entries"]
    assert set(entries) == {"README.md", "src/", "docs/"}
    assert "src/" in text and "README.md" in text
    ok(default)
    assert default.structured_content["directories"][0]["path"] == str(ws.root)


async def test_directory_tree(rootgrep_bin, ws):
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root])) as client:
            text = ok(await call(client, "directory_tree", {"path": str(ws.root)}))
    lines = text.splitlines()

    def row(name: str) -> int:
        matches = [i for i, line in enumerate(lines) if line.strip() == name]
        assert matches, f"{name!r} not in tree:\n{text}"
        return matches[0]

    def indent(i: int) -> int:
        return len(lines[i]) - len(lines[i].lstrip())

    src, main_rs, docs, guide = row("src/"), row("main.rs"), row("docs/"), row("guide.md")
    assert indent(main_rs) > indent(src) and main_rs > src  # nested under its directory
    assert indent(guide) > indent(docs) and guide > docs
    assert indent(row("README.md")) == indent(src)


async def test_write_file_then_read_back(rootgrep_bin, ws):
    target = ws.root / "notes" / "todo.md"
    content = "- write tests\n- ship\n"
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root])) as client:
            text = ok(await call(client, "write_file", {"path": str(target), "content": content, "create_dirs": True}))
            assert str(target) in text
            assert target.read_text() == content
            back = ok(await call(client, "read_file", {"path": str(target)}))
            assert back.splitlines() == numbered(["- write tests", "- ship"])

            # Overwriting keeps the file's permissions (the write is a rename of a temp file);
            # Windows has no mode bits to keep (chmod there only sets read-only).
            if os.name != "nt":
                target.chmod(0o640)
            ok(await call(client, "write_file", {"path": str(target), "content": "done\n"}))
            assert target.read_text() == "done\n"
            if os.name != "nt":
                assert stat.S_IMODE(target.stat().st_mode) == 0o640

            # Without create_dirs, a missing parent is a tool error, and nothing is created.
            deep = ws.root / "a" / "b" / "c.txt"
            assert str(deep) in err(await call(client, "write_file", {"path": str(deep), "content": "x"}))
            assert not (ws.root / "a").exists()


async def test_edit_file_returns_diff(rootgrep_bin, ws):
    main_rs = ws.root / "src" / "main.rs"
    before = main_rs.read_text()
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root])) as client:
            edit = {"path": str(main_rs), "old_string": 'println!("hello");', "new_string": 'println!("bye");'}

            # dry_run shows the diff and writes nothing.
            dry = ok(await call(client, "edit_file", {**edit, "dry_run": True}))
            assert '-    println!("hello");' in dry and '+    println!("bye");' in dry
            assert main_rs.read_text() == before

            diff = ok(await call(client, "edit_file", edit))
            assert "@@" in diff
            assert '-    println!("hello");' in diff and '+    println!("bye");' in diff
            assert main_rs.read_text() == before.replace("hello", "bye")

            # old_string no longer present: a tool error the model can act on, file untouched.
            assert "not found" in err(await call(client, "edit_file", edit)).lower()

            # Ambiguous old_string: refused with the match count, unless replace_all.
            dup = ws.root / "dup.txt"
            dup.write_text("x = 1\nx = 1\n")
            ambiguous = err(await call(client, "edit_file", {"path": str(dup), "old_string": "x = 1", "new_string": "y"}))
            assert "2" in ambiguous.replace(str(dup), "")  # how many matches
            assert dup.read_text() == "x = 1\nx = 1\n"
            ok(await call(client, "edit_file", {"path": str(dup), "old_string": "x = 1", "new_string": "y", "replace_all": True}))
            assert dup.read_text() == "y\ny\n"

            # CRLF files stay CRLF.
            crlf = ws.root / "win.txt"
            crlf.write_bytes(b"one\r\ntwo\r\n")
            ok(await call(client, "edit_file", {"path": str(crlf), "old_string": "two", "new_string": "2"}))
            assert crlf.read_bytes() == b"one\r\n2\r\n"


async def test_create_directory(rootgrep_bin, ws):
    nested = ws.root / "build" / "out" / "logs"
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root])) as client:
            text = ok(await call(client, "create_directory", {"path": str(nested)}))
            assert nested.is_dir()
            assert str(nested) in text
            ok(await call(client, "create_directory", {"path": str(nested)}))  # mkdir -p: fine if it exists
            assert nested.is_dir()


async def test_move_file_never_overwrites(rootgrep_bin, ws):
    lib_rs, main_rs = ws.root / "src" / "lib.rs", ws.root / "src" / "main.rs"
    lib_before, main_before = lib_rs.read_text(), main_rs.read_text()
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root])) as client:
            refused = err(await call(client, "move_file", {"source": str(lib_rs), "destination": str(main_rs)}))
            assert str(main_rs) in refused
            assert lib_rs.read_text() == lib_before and main_rs.read_text() == main_before

            moved = ws.root / "src" / "math.rs"
            ok(await call(client, "move_file", {"source": str(lib_rs), "destination": str(moved)}))
            assert not lib_rs.exists()
            assert moved.read_text() == lib_before


async def require_tool(client: Client, name: str) -> None:
    """The tool must be listed: a missing tool is a failure, never a skip."""
    listing = await bounded(client.list_tools())
    names = {tool.name for tool in listing.tools}
    assert name in names, f"tools/list has no {name} tool: {sorted(names)}"


def make_git_checkout(ws) -> None:
    """Make the workspace look like a git checkout with ignored build output and a hidden file."""
    (ws.root / ".git").mkdir()
    (ws.root / ".gitignore").write_text("target/\n")
    (ws.root / "target").mkdir()
    (ws.root / "target" / "generated.rs").write_text("fn main() {}\n")
    (ws.root / ".hidden.rs").write_text("fn main() {}\n")


async def test_grep(rootgrep_bin, ws):
    make_git_checkout(ws)
    main_rs, lib_rs = ws.root / "src" / "main.rs", ws.root / "src" / "lib.rs"
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root])) as client:
            await require_tool(client, "grep")

            # Default mode: the files that match, gitignored and hidden files skipped.
            # Paths relative to the one root, which the structured result names once.
            result = await call(client, "grep", {"pattern": r"fn \w+\("})
            text = ok(result)
            files = result.structured_content["files"]
            assert [absolute(result.structured_content, f) for f in files] == [str(lib_rs), str(main_rs)]
            assert result.structured_content["root"] == str(ws.root)
            assert text.splitlines() == [relative(ws, lib_rs), relative(ws, main_rs)]

            # Content mode: grouped by file, `line:text` rows; the same rows structured.
            result = await call(client, "grep", {"pattern": "println", "output_mode": "content"})
            text = ok(result)
            assert text.splitlines()[:2] == [relative(ws, main_rs), '2:    println!("hello");']
            [file] = result.structured_content["matches"]
            assert absolute(result.structured_content, file["path"]) == str(main_rs)
            assert file["matches"] == [[2, '    println!("hello");']]

            # With context, the matching row holds the lines beside it (validated too).
            result = await call(client, "grep", {"pattern": "println", "output_mode": "content", "-C": 1})
            ok(result)
            [file] = result.structured_content["matches"]
            assert file["matches"] == [[2, '    println!("hello");', ["fn main() {"], ["}"]]]

            # Case-sensitive by default; -i and a path restrict/relax it.
            sensitive = await call(client, "grep", {"pattern": "DEMO"})
            ok(sensitive)
            assert sensitive.structured_content.get("files", []) == []
            assert sensitive.structured_content["total"] == 0
            insensitive = await call(client, "grep", {"pattern": "DEMO", "-i": True, "path": str(ws.root)})
            assert insensitive.structured_content["files"] == ["README.md"]

            # A bad regex is a tool error that quotes the pattern.
            assert "(unclosed" in err(await call(client, "grep", {"pattern": "(unclosed"}))


async def test_glob(rootgrep_bin, ws):
    make_git_checkout(ws)
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root])) as client:
            await require_tool(client, "glob")
            result = await call(client, "glob", {"pattern": "**/*.rs", "sort": "path"})
            text = ok(result)
            expected = [str(ws.root / "src" / "lib.rs"), str(ws.root / "src" / "main.rs")]
            files = result.structured_content["files"]
            assert [absolute(result.structured_content, f) for f in files] == expected
            assert text.splitlines()[:2] == files

            # The pattern matches the path relative to the root, not just the file name.
            result = await call(client, "glob", {"pattern": "src/m*.rs"})
            ok(result)
            files = result.structured_content["files"]
            assert [absolute(result.structured_content, f) for f in files] == expected[1:]


async def test_search_ranks_definitions(rootgrep_bin, ws):
    """Ranked search through the SDK, which validates structuredContent against the
    outputSchema: the definition answering a question in words comes first, with its
    line range, the words it matched and its text; a saved file is found by the next
    search; a query with no words is a tool error."""
    lib_rs = ws.root / "src" / "lib.rs"
    lib_rs.write_text(
        "/// Adds two numbers.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n"
        "/// Resets the watchdog timer after a fault.\npub fn reset_timer() {}\n"
    )
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root])) as client:
            await require_tool(client, "search")
            result = await call(client, "search", {"query": "the watchdog timer is not reset after a fault"})
            text = ok(result)
            # Consecutive results of a file under its path.
            file = result.structured_content["files"][0]
            first = file["results"][0]
            assert (file["path"], first["name"], first["kind"], first["line"], first["end_line"]) == (
                relative(ws, lib_rs), "reset_timer", "function", 7, 7)
            assert absolute(result.structured_content, file["path"]) == str(lib_rs)
            assert {"watchdog", "timer", "reset", "fault"} <= set(first["matched"])
            assert first["text"] == "7:pub fn reset_timer() {}\n"
            assert text.startswith(f"{relative(ws, lib_rs)}\n@@ function reset_timer (7-7) score ")
            assert result.structured_content["total"] >= 1

            # Saved while the server runs: the next search sees the new text, not the old.
            lib_rs.write_text("pub fn flush_queue() {\n    drain();\n}\n")
            for _ in range(100):
                result = await call(client, "search", {"query": "flush the queue"})
                names = [r.get("name") for f in result.structured_content.get("files", []) for r in f["results"]]
                if names and names[0] == "flush_queue":
                    break
                await anyio.sleep(0.05)
            assert names[0] == "flush_queue", names
            found = await call(client, "search", {"query": "watchdog fault"})
            assert all(r.get("name") != "reset_timer" for f in found.structured_content.get("files", []) for r in f["results"])

            err(await call(client, "search", {"query": "!!! ??? ..."}))
            err(await call(client, "search", {"query": "x", "kind": "nonsense"}))


async def test_search_expand_asks_the_hosts_model(rootgrep_bin, ws):
    """`expand: true` through the SDK's sampling callback: the host's model is asked for code
    terms (a system prompt, a small maxTokens, speed-first preferences), its terms find the
    definition the words alone miss, and the answer says what was added; a host that fails
    leaves the plain query, and says so."""
    (ws.root / "journal.c").write_text(
        "int journal_flush_deadline(struct journal *j)\n{\n  return j->pending > LIMIT;\n}\n")
    (ws.root / "notes.c").write_text(
        "/* we give up waiting on the disk when it is slow */\nint wait_disk_slow(void)\n{\n  return 0;\n}\n")
    asked: list[types.CreateMessageRequestParams] = []
    failing = [False]

    async def sample(context: Any, params: types.CreateMessageRequestParams) -> Any:
        asked.append(params)
        if failing[0]:
            return types.ErrorData(code=-1, message="User rejected sampling request")
        return types.CreateMessageResult(role="assistant", model="tiny-model",
                                         content=types.TextContent(type="text", text="journal_flush_deadline"))

    question = "when do we give up waiting on the disk"
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root]), sampling=sample) as client:
            await require_tool(client, "search")
            names = lambda r: [x.get("name") for f in r.structured_content.get("files", []) for x in f["results"]]
            plain = await call(client, "search", {"query": question})
            ok(plain)
            assert not asked
            assert names(plain)[0] == "wait_disk_slow", names(plain)

            expanded = await call(client, "search", {"query": question, "expand": True})
            text = ok(expanded)
            assert len(asked) == 1
            assert "code terms" in (asked[0].system_prompt or "")
            assert asked[0].max_tokens <= 200
            assert names(expanded)[0] == "journal_flush_deadline", names(expanded)
            assert "expanded by the host's model (tiny-model) with: journal_flush_deadline" in text

            failing[0] = True
            refused = await call(client, "search", {"query": question, "expand": True})
            text = ok(refused)
            assert "not expanded: the host refused or failed" in text, text
            assert names(refused)[0] == "wait_disk_slow"


async def test_symbols_outline_references_and_read_symbol(rootgrep_bin, ws):
    """The symbol tools through the SDK, which validates structuredContent against each
    tool's outputSchema."""
    lib_rs = ws.root / "src" / "lib.rs"
    lib_rs.write_text(
        "pub struct Calc;\n\nimpl Calc {\n    pub fn add(&self, a: i32, b: i32) -> i32 {\n"
        "        a + b\n    }\n}\n\npub fn add(a: i32, b: i32) -> i32 {\n    Calc.add(a, b)\n}\n"
    )
    with anyio.fail_after(TEST_BUDGET):
        # references is offered with --tools (the default set leaves it to grep + scope).
        async with connect(rootgrep_bin, Host([ws.root]), args=["--tools", "all"]) as client:
            for name in ("symbols", "outline", "references"):
                await require_tool(client, name)

            result = await call(client, "symbols", {"query": "add"})
            text = ok(result)
            # Per file, rows of [line, end_line, kind, name, signature].
            [[path, found]] = result.structured_content["files"]
            assert path == relative(ws, lib_rs)
            assert [(kind, name, line) for line, _, kind, name, _ in found] == [
                ("method", "Calc::add", 4),
                ("function", "add", 9),
            ]
            assert text.splitlines()[:2] == [
                relative(ws, lib_rs),
                "4-6 method Calc::add: pub fn add(&self, a: i32, b: i32) -> i32 {",
            ]

            result = await call(client, "outline", {"path": str(lib_rs)})
            text = ok(result)
            assert text.splitlines()[:4] == [
                relative(ws, lib_rs),
                "1-1 struct pub struct Calc;",
                "3-7 impl impl Calc {",
                "  4-6 method pub fn add(&self, a: i32, b: i32) -> i32 {",
            ]
            assert result.structured_content["total"] == 4
            # Rows of [line, end_line, kind, signature, depth when nested].
            [file] = result.structured_content["files"]
            assert file["definitions"][2] == [4, 6, "method", "pub fn add(&self, a: i32, b: i32) -> i32 {", 1]

            result = await call(client, "references", {"name": "add"})
            ok(result)
            # Each file's uses under the definitions holding them, with the lines that
            # define the name.
            [file] = result.structured_content["files"]
            uses = sorted(
                (line, line in file.get("definitions", []), name)
                for _, _, _, name, lines in file["scopes"]
                for line, _ in lines
            )
            assert uses == [(4, True, "Calc::add"), (9, True, "add"), (10, False, "add")]

            result = await call(client, "read_file", {"path": str(lib_rs), "symbol": "Calc::add"})
            text = ok(result)
            assert text.splitlines()[1:] == numbered(
                ["    pub fn add(&self, a: i32, b: i32) -> i32 {", "        a + b", "    }"], first=4
            )
            ambiguous = ok(await call(client, "read_file", {"path": str(lib_rs), "symbol": "add"}))
            assert ambiguous.startswith('2 definitions named "add"')
            err(await call(client, "symbols", {"query": "x", "path": str(ws.outside)}))

            # grep + scope: the SDK validates the scope objects against the outputSchema.
            result = await call(client, "grep", {"pattern": "a \\+ b|Calc\\.add", "scope": True})
            text = ok(result)
            [file] = result.structured_content["matches"]
            assert [(kind, name, [line for line, _ in lines]) for _, _, kind, name, lines in file["scopes"]] == [
                ("method", "Calc::add", [5]),
                ("function", "add", [10]),
            ]
            assert text.splitlines()[:6] == [
                relative(ws, lib_rs),
                "@@ method Calc::add (4-6)",
                "5:        a + b",
                "--",
                "@@ function add (9-11)",
                "10:    Calc.add(a, b)",
            ]


# --------------------------------------------------------------------------------------
# 5. Out-of-root access: elicitation
# --------------------------------------------------------------------------------------


async def test_elicitation_accept(rootgrep_bin, ws):
    secret = ws.outside / "secret.txt"
    host = Host([ws.root], answers=[{"allow": True}])
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, host) as client:
            text = ok(await call(client, "read_file", {"path": str(secret)}))
            assert text.splitlines() == numbered(["top secret"])

    assert len(host.questions) == 1
    question = host.questions[0]
    assert isinstance(question, types.ElicitRequestFormParams)
    assert question.mode == "form"
    assert str(secret) in question.message
    assert "read" in question.message.replace(str(ws.tmp), "")  # the operation
    assert str(ws.root) in question.message  # the current roots, so the user can judge

    schema = question.requested_schema
    assert schema["type"] == "object"
    assert schema["properties"]["allow"]["type"] == "boolean"
    assert schema["properties"]["remember"]["type"] == "boolean"
    assert schema["properties"]["remember"].get("default", False) is False
    assert "allow" in schema.get("required", [])
    assert "remember" not in schema.get("required", [])
    # Flat and primitive, so every client can render it.
    assert all(prop["type"] in {"boolean", "string", "number", "integer"} for prop in schema["properties"].values())


async def test_elicitation_decline_refuses_and_is_remembered(rootgrep_bin, ws):
    secret = ws.outside / "secret.txt"
    host = Host([ws.root], answers=["decline"])
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, host) as client:
            refused = err(await call(client, "read_file", {"path": str(secret)}))
            assert str(secret) in refused
            assert "top secret" not in refused
            assert len(host.questions) == 1

            # Not asked again for that path in this session.
            again = err(await call(client, "read_file", {"path": str(secret)}))
            assert str(secret) in again
            assert len(host.questions) == 1

            listing = await list_roots(client)
            assert {"access": "read", "path": str(secret)} in listing["refusals"]


async def test_elicitation_accept_with_allow_false_refuses(rootgrep_bin, ws):
    host = Host([ws.root], answers=[{"allow": False}])
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, host) as client:
            refused = err(await call(client, "read_file", {"path": str(ws.outside / "secret.txt")}))
    assert "top secret" not in refused
    assert len(host.questions) == 1


async def test_elicitation_cancel_refuses_and_asks_again(rootgrep_bin, ws):
    secret = ws.outside / "secret.txt"
    host = Host([ws.root], answers=["cancel", {"allow": True}])
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, host) as client:
            dismissed = err(await call(client, "read_file", {"path": str(secret)}))
            assert str(secret) in dismissed
            assert len(host.questions) == 1

            # Dismissing is not a refusal: the next attempt asks again (and is allowed).
            text = ok(await call(client, "read_file", {"path": str(secret)}))
            assert "top secret" in text
            assert len(host.questions) == 2


async def test_elicitation_remember_grants_the_directory_for_reads_only(rootgrep_bin, ws):
    secret, notes, new = ws.outside / "secret.txt", ws.outside / "notes.txt", ws.outside / "new.txt"
    host = Host([ws.root], answers=[{"allow": True, "remember": True}, "decline"])
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, host) as client:
            ok(await call(client, "read_file", {"path": str(secret)}))
            assert len(host.questions) == 1

            # Another file in that directory: read without asking.
            assert "more notes" in ok(await call(client, "read_file", {"path": str(notes)}))
            assert len(host.questions) == 1

            listing = await list_roots(client)
            assert {"access": "read", "path": str(ws.outside)} in listing["grants"]

            # A read grant is not a write grant: writing there asks (and is declined here).
            refused = err(await call(client, "write_file", {"path": str(new), "content": "x"}))
            assert str(new) in refused
            assert len(host.questions) == 2
            assert "write" in host.questions[1].message.replace(str(ws.tmp), "")
            assert not new.exists()


async def test_elicitation_timeout_cancels_the_question(rootgrep_bin, ws):
    events: list[str] = []

    async def never_answer(params: types.ElicitRequestParams) -> types.ElicitResult:
        events.append("asked")
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            events.append("cancelled")  # the server sent notifications/cancelled for it
            raise
        return types.ElicitResult(action="cancel")

    host = Host([ws.root], answers=[never_answer])
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, host, args=["--elicitation-timeout", "1"]) as client:
            started = anyio.current_time()
            refused = err(await call(client, "read_file", {"path": str(ws.outside / "secret.txt")}))
            assert anyio.current_time() - started < 5.0
            assert str(ws.outside / "secret.txt") in refused
            await wait_until(lambda: "cancelled" in events, "the timed-out question to be cancelled")
            ok(await call(client, "list_roots"))  # and the server keeps serving


async def test_cancelling_the_call_cancels_its_question(rootgrep_bin, ws):
    events: list[str] = []

    async def slow_user(params: types.ElicitRequestParams) -> types.ElicitResult:
        events.append("asked")
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            events.append("cancelled")
            raise
        return types.ElicitResult(action="accept", content={"allow": True})

    host = Host([ws.root], answers=[slow_user])
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, host) as client:
            # The host gives up on the call (the SDK sends notifications/cancelled for it).
            with anyio.move_on_after(STEP) as scope:
                call_task_done = anyio.Event()

                async def give_up_once_asked() -> None:
                    await wait_until(lambda: "asked" in events, "the question")
                    scope.cancel()

                async with anyio.create_task_group() as tg:
                    tg.start_soon(give_up_once_asked)
                    await client.call_tool("read_file", {"path": str(ws.outside / "secret.txt")})
                    call_task_done.set()
            assert not call_task_done.is_set(), "the call finished although the user never answered"
            assert scope.cancelled_caught
            await wait_until(lambda: "cancelled" in events, "the server to cancel the question of a cancelled call")
            # The server keeps serving.
            assert root_paths(await list_roots(client)) == [str(ws.root)]


# --------------------------------------------------------------------------------------
# 6. Logging
# --------------------------------------------------------------------------------------


async def test_logging_set_level(rootgrep_bin, ws):
    missing_a, missing_b = ws.tmp / "missing-a", ws.tmp / "missing-b"
    host = Host([ws.root])

    def below(level: str) -> list[types.LoggingMessageNotificationParams]:
        return [log for log in host.logs if SEVERITY.index(log.level) < SEVERITY.index(level)]

    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, host) as client:
            await list_roots(client)
            assert not below("warning"), f"default level is warning; got {below('warning')}"

            for level in ("debug", "emergency", "error"):
                assert isinstance(await bounded(client.set_logging_level(level)), types.EmptyResult)

            # At "error", a roots change with a missing directory sends nothing below error.
            host.logs.clear()
            host.roots = [ws.root, missing_a]
            await bounded(client.send_roots_list_changed())
            await wait_for_roots(client, [str(ws.root), str(missing_a)])

            # At "debug", the same kind of change is reported to the client. Its log is also
            # the marker for the check above: logs go out in order, so anything the change
            # at "error" let through would have arrived before it.
            await bounded(client.set_logging_level("debug"))
            at_error = len(host.logs)  # what arrived while the level was still "error"
            host.roots = [ws.root, missing_b]
            await bounded(client.send_roots_list_changed())
            await wait_for_roots(client, [str(ws.root), str(missing_b)])

            def about_b(log: types.LoggingMessageNotificationParams) -> bool:
                return str(missing_b) in str(log.data)

            await wait_until(lambda: any(about_b(log) for log in host.logs), "a log about missing-b at level debug")
            marker = next(i for i, log in enumerate(host.logs) if about_b(log))
            early = [log for log in host.logs[:at_error] if SEVERITY.index(log.level) < SEVERITY.index("error")]
            assert not early, f"level was error; got {early}"
            # The missing-a warning was filtered out, not merely late.
            late = [log for log in host.logs[:marker] if str(missing_a) in str(log.data)]
            assert not late, f"level was error when missing-a was reported; got {late}"
            assert all(log.level in SEVERITY for log in host.logs)


# --------------------------------------------------------------------------------------
# 7. A client without roots or elicitation
# --------------------------------------------------------------------------------------


async def test_client_without_roots_or_elicitation(rootgrep_bin, ws):
    secret = ws.outside / "secret.txt"
    host = Host()
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, host, roots=False, elicitation=False, cwd=ws.root) as client:
            listing = await list_roots(client)
            assert listing["source"] == "working directory"
            assert root_paths(listing) == [str(ws.root)]

            refused = err(await call(client, "read_file", {"path": str(secret)}))
            assert str(secret) in refused
            assert str(ws.root) in refused  # names the roots, so the model can tell the user
            assert "top secret" not in refused
            assert host.roots_requests == 0 and not host.questions

            # Escapes through `..` or a symlink inside the root are outside too.
            link = ws.root / "link.txt"
            link.symlink_to(secret)
            # The refusal names what was sent, never where it leads.
            for path in ["../outside/secret.txt", str(link)]:
                refused = err(await call(client, "read_file", {"path": path}))
                assert path in refused
                assert str(secret) not in refused
                assert "top secret" not in refused

            assert numbered(["# Demo"])[0] in ok(await call(client, "read_file", {"path": "README.md"}))


async def test_command_line_dirs_are_the_roots_without_client_roots(rootgrep_bin, ws):
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, roots=False, elicitation=False, args=[str(ws.root)], cwd=ws.tmp) as client:
            listing = await list_roots(client)
            assert listing["source"] == "command line"
            assert root_paths(listing) == [str(ws.root)]


# --------------------------------------------------------------------------------------
# 8. Malformed arguments
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        ("read_file", {"path": 42}, "42"),
        ("read_file", {}, "path"),
        ("read_file", {"path": "README.md", "bogus": True}, "bogus"),
        ("read_file", {"path": "README.md", "limit": "ten"}, "ten"),
        ("edit_file", {"path": "README.md", "old_string": "Demo"}, "new_string"),
        ("read_files", {"paths": "README.md"}, "README.md"),
        ("move_file", {"source": "README.md"}, "destination"),
    ],
)
async def test_malformed_arguments_are_tool_errors(rootgrep_bin, ws, tool, arguments, named):
    readme_before = (ws.root / "README.md").read_text()
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root])) as client:
            message = err(await call(client, tool, arguments))  # a result the model sees, not an exception
            assert named in message
            ok(await call(client, "list_roots"))  # and the server keeps serving
    assert (ws.root / "README.md").read_text() == readme_before


async def test_unknown_tool_is_a_protocol_error(rootgrep_bin, ws):
    # The MCP spec (2025-11-25, tools § Error Handling) makes an unknown tool a JSON-RPC error.
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root])) as client:
            with pytest.raises(MCPError) as caught:
                await call(client, "no_such_tool", {})
            assert caught.value.code == types.INVALID_PARAMS
            assert "no_such_tool" in caught.value.message
            ok(await call(client, "list_roots"))


# --------------------------------------------------------------------------------------
# 9. The stateless era (2026-07-28): the SDK's default "auto" mode discovers it
# --------------------------------------------------------------------------------------


async def test_modern_roots_arrive_through_input_required(rootgrep_bin, ws):
    host = Host([ws.root])
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, host, mode="auto") as client:
            assert client.protocol_version == "2026-07-28"
            roots = await list_roots(client)
            assert roots["source"] == "client"
            assert [r["path"] for r in roots["roots"]] == [str(ws.root)]
            assert host.roots_requests >= 1
            # Each request asks again: nothing is remembered between stateless requests.
            before = host.roots_requests
            ok(await call(client, "read_file", {"path": "src/main.rs"}))
            assert host.roots_requests > before


async def test_modern_permission_accept_and_decline(rootgrep_bin, ws):
    secret = ws.outside / "secret.txt"
    host = Host([ws.root], answers=[{"allow": True}, "decline"])
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, host, mode="auto") as client:
            assert client.protocol_version == "2026-07-28"
            body = ok(await call(client, "read_file", {"path": str(secret)}))
            assert "top secret" in body
            assert str(secret) in host.questions[0].message
            refused = err(await call(client, "read_file", {"path": str(secret)}))
            assert "top secret" not in refused
            assert len(host.questions) == 2


async def test_modern_search_and_resources(rootgrep_bin, ws):
    with anyio.fail_after(TEST_BUDGET):
        async with connect(rootgrep_bin, Host([ws.root]), mode="auto") as client:
            result = await call(client, "grep", {"pattern": "fn main", "output_mode": "content"})
            assert "fn main" in ok(result)
            read = await bounded(client.read_resource((ws.root / "src" / "main.rs").as_uri()))
            assert "fn main" in read.contents[0].text
