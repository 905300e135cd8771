#!/usr/bin/env python3
"""Answers of every tool, from two server builds, on copies of one tree: prints what differs.

    python3 bench/answers_diff.py --a OLD_BINARY --b NEW_BINARY --tree DIR

Used to check that a restructuring changes no answer: each build gets a fresh copy of
`--tree` (writes happen on the copy), answers the same sequence of calls (tools/list,
resources/list, prompts/list, completion, and each tool with typical and failing
arguments), and the two transcripts are compared after the copy's path is replaced by
`ROOT` (timings in milliseconds are masked). Exit 1 when they differ.

Whatever the tree, the copy also gets `answers-fixture/` (made by `prepare`): files and
directories that lead each tool into its refusals (edit errors of every kind, a UTF-16 file,
a file over the edit limit, a tree deeper and wider than the defaults, an ignore file too
large to apply), so their texts are compared too. Five more sessions: four see twelve roots
or confine directories (named "a, b … and N more"): existing roots without elicitation,
missing roots, and a `--confine` list with and without elicitation; the fifth has a small
output budget, so the answers cut and say how to continue.
"""
import argparse
import base64
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import Server  # noqa: E402


def tool(tool_name, **args):
    return ("tools/call", {"name": tool_name, "arguments": args})


def prepare(root):
    """Adds `answers-fixture/` to the copy: what the failing calls below need."""
    fx = os.path.join(root, "answers-fixture")
    os.makedirs(fx)

    def put(rel, data):
        path = os.path.join(fx, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())

    put("utf16.txt", b"\xff\xfeh\x00i\x00\n\x00")
    put("latin1.txt", b"one\ntwo caf\xe9\n")
    put("big.txt", b"a" * (16 * 1024 * 1024 + 10))
    put("ws.txt", "fn main() {\n    let x  =  1;\n    let y =\n        2;\n}\n")
    put("twice.txt", "a  b\nzz\na b\n")
    put("many.txt", "a\n" * 60)
    put("xs.txt", "x" * 1000)
    put("crlf.txt", "one\r\ntwo\r\n")
    for n in range(30):
        put(f"tree/wide/f{n:02}.txt", "")
    put("tree/a/b/c/d/e/deep.txt", "")
    put("tree/a/b/c/d/more.txt", "")
    put("tree/a/b/side.txt", "")
    put("tree/.hidden/h.txt", "")
    put("tree/.gitignore", "ignored/\n")
    put("tree/ignored/x.txt", "")
    put("tree/bigignore/.ignore", "# padding\n" * 8000)
    put("tree/bigignore/kept.txt", "")
    os.makedirs(os.path.join(fx, "tree", ".git"))
    os.symlink("wide", os.path.join(fx, "tree", "link"))
    put("target.txt", "alpha\n")
    os.symlink("target.txt", os.path.join(fx, "link.txt"))
    for n in range(12):
        put(f"roots/r{n:02}/file{n}.txt", f"root {n}\n")
    # One modification time for all, so listings with times compare.
    for dirpath, dirnames, filenames in os.walk(fx):
        for name in dirnames + filenames:
            os.utime(os.path.join(dirpath, name), (1.7e9, 1.7e9), follow_symlinks=False)
    return fx


def error_calls(fx):
    """Calls that fail, or that cut their answer, in every way the tools word."""
    def edit(path, **args):
        return tool("edit_file", path=f"{fx}/{path}", **args)
    pairs = lambda *p: [{"old_string": o, "new_string": n} for o, n in p]
    return [
        # edit_file: every EditError.
        edit("ws.txt", edits=[]),
        edit("ws.txt", edits=pairs(*[("fn", "fn")] * 1001)),
        edit("big.txt", old_string="a", new_string="b"),
        edit("nope.txt", old_string="a", new_string="b"),
        edit("tree", old_string="a", new_string="b"),
        edit("link.txt", old_string="a", new_string="b"),
        edit("utf16.txt", old_string="h", new_string="H"),
        edit("latin1.txt", old_string="one", new_string="1"),
        edit("ws.txt", old_string="", new_string="x"),
        edit("ws.txt", edits=pairs(("fn", "fun"), ("", "x"))),
        edit("ws.txt", old_string="main", new_string="main"),
        edit("ws.txt", edits=pairs(("fn", "fun"), ("x", "x"))),
        edit("ws.txt", old_string="let x = 1;", new_string="let x = 2;"),
        edit("ws.txt", old_string="let y = 2;", new_string="let y = 3;"),
        edit("twice.txt", old_string="a     b", new_string="c"),
        edit("ws.txt", old_string="     2\t    let x  =  1;", new_string="z"),
        edit("ws.txt", old_string="  9\tnothing", new_string="z"),
        edit("ws.txt", old_string="no such text anywhere", new_string="z"),
        edit("ws.txt", edits=pairs(("fn main", "fn start"), ("fn main", "fn other"))),
        edit("ws.txt", edits=pairs(("fn main", "fn start"), ("absent", "x"))),
        edit("many.txt", old_string="a", new_string="b"),
        edit("many.txt", edits=pairs(("a\na\n", "b\n"), ("a", "c"))),
        edit("twice.txt", old_string="zz", new_string="zz\nzz"),
        edit("twice.txt", edits=pairs(("zz", "zz\nzz"), ("zz", "y"))),
        edit("xs.txt", old_string="x", new_string="y" * 9000, replace_all=True),
        edit("crlf.txt", old_string="one\ntwo", new_string="1\n2"),
        edit("ws.txt", old_string="main", new_string="start", dry_run=True),
        # write_file, create_directory, move_file.
        tool("write_file", path=f"{fx}/missing/deeper/f.txt", content="x"),
        tool("write_file", path=f"{fx}/ws.txt/f.txt", content="x"),
        tool("write_file", path=f"{fx}/tree", content="x"),
        tool("write_file", path=f"{fx}/link.txt", content="x"),
        tool("write_file", path=f"{fx}/made/a/b/c.txt", content="x", create_dirs=True),
        tool("create_directory", path=f"{fx}/ws.txt/sub"),
        tool("create_directory", path=f"{fx}/ws.txt"),
        tool("move_file", source=f"{fx}/twice.txt", destination=f"{fx}/ws.txt"),
        tool("move_file", source=f"{fx}/twice.txt", destination=f"{fx}/twice.txt"),
        tool("move_file", source=f"{fx}/twice.txt", destination=f"{fx}/nodir/twice.txt"),
        tool("move_file", source=f"{fx}/tree", destination=f"{fx}/tree/wide/tree"),
        tool("move_file", source=f"{fx}/gone.txt", destination=f"{fx}/gone2.txt"),
        # Listings and trees: not a directory, cut by depth, by entries, by bytes.
        tool("list_directory", path=f"{fx}/ws.txt"),
        tool("list_directory", path=f"{fx}/nowhere"),
        tool("list_directory", path=f"{fx}/tree/wide", head_limit=5, offset=3),
        tool("list_directory", path=f"{fx}/tree", offset=200_000_000),
        tool("directory_tree", path=f"{fx}/ws.txt"),
        tool("directory_tree", path=f"{fx}/nowhere"),
        tool("directory_tree", path=f"{fx}/tree"),
        tool("directory_tree", path=f"{fx}/tree", max_depth=1),
        tool("directory_tree", path=f"{fx}/tree", max_depth=0),
        tool("directory_tree", path=f"{fx}/tree", max_depth=2, head_limit=4),
        tool("directory_tree", path=f"{fx}/tree", head_limit=1),
        tool("directory_tree", path=f"{fx}/tree", max_depth=64, head_limit=0,
             hidden=True, no_ignore=True),
        tool("directory_tree", path=f"{fx}/tree/a", max_depth=2),
        tool("directory_tree", path=f"{fx}/tree/bigignore"),
        # Reading a directory.
        tool("read_file", path=f"{fx}/tree"),
        tool("read_files", paths=[f"{fx}/tree", f"{fx}/ws.txt", f"{fx}/nope.txt"]),
        tool("file_info", path=f"{fx}/tree"),
        tool("read_file", path=f"{fx}/utf16.txt"),
        ("resources/read", {"uri": f"file://{fx}/tree"}),
        # Query errors.
        tool("grep", pattern="a{2,1}"),
        tool("grep", pattern="foo(bar"),
        tool("grep", pattern="f{oo"),
        tool("grep", pattern="[abc"),
        tool("grep", pattern="plain(", fixed_strings=True, path=fx),
        tool("grep", pattern="one\ntwo", path=fx),
        tool("grep", pattern="one\ntwo", multiline=True, path=fx),
        tool("grep", pattern=r"one\ntwo", path=fx),
        tool("grep", pattern=r"\w{1000}{1000}"),
        tool("grep", pattern="x{2"),
        tool("grep", pattern="foo)"),
        tool("grep", pattern="(a|b)" * 20000),
        tool("grep", pattern="x", glob="{a"),
        tool("grep", pattern="x", type="nosuchtype"),
        tool("glob", pattern="a[b"),
        tool("glob", pattern="{" * 3000),
        tool("symbols", query="x", lang="nosuchlang"),
    ]


def calls(root):
    fx = os.path.join(root, "answers-fixture")
    return [
        ("tools/list", {}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("prompts/list", {}),
        tool("list_roots"),
        tool("grep", pattern="fn main"),
        tool("grep", pattern="fn \\w+_file", output_mode="content", head_limit=20),
        tool("grep", pattern="Error", output_mode="count", glob="*.rs"),
        tool("grep", pattern="(unclosed"),
        tool("grep", pattern="x", path="/etc"),
        tool("glob", pattern="**/*.rs"),
        tool("glob", pattern="**/mod.rs", head_limit=3, offset=1),
        tool("file_info", path=f"{root}/src/lib.rs"),
        tool("read_file", path=f"{root}/src/lib.rs"),
        tool("read_file", path=f"{root}/src/main.rs", offset=10, limit=5),
        tool("read_file", path=f"{root}/nope.rs"),
        tool("read_files", paths=[f"{root}/src/lib.rs", f"{root}/src/config.rs"]),
        tool("symbols", query="parse"),
        tool("symbols", query="Config", kind="struct"),
        tool("outline", path=f"{root}/src/config.rs"),
        tool("references", symbol="Config"),
        tool("list_directory", path=f"{root}/src"),
        tool("directory_tree", path=f"{root}/src"),
        tool("write_file", path=f"{root}/new.txt", content="one\ntwo\n"),
        tool("edit_file", path=f"{root}/new.txt", old_string="two", new_string="three"),
        tool("edit_file", path=f"{root}/new.txt", old_string="absent", new_string="x"),
        tool("create_directory", path=f"{root}/made/deep"),
        tool("move_file", source=f"{root}/new.txt", destination=f"{root}/made/new.txt"),
        tool("no_such_tool"),
        ("completion/complete", {"ref": {"type": "ref/resource", "uri": "file:///{path}"},
                                 "argument": {"name": "path", "value": root + "/src/"}}),
    ] + error_calls(fx)


def many_roots_calls(fx):
    """With twelve roots: the texts that name the roots, cut to the first ten."""
    return [
        tool("list_roots"),
        tool("read_file", path="/etc/hostname"),
        tool("list_directory"),
        tool("directory_tree", max_depth=1),
        tool("grep", pattern="root"),
        ("resources/subscribe", {"uri": "file:///etc/hostname"}),
    ]


def missing_roots_calls(fx):
    return [
        tool("list_roots"),
        tool("grep", pattern="root"),
        tool("list_directory"),
        tool("directory_tree"),
    ]


def small_budget_calls(fx):
    """Under a small output budget: the cuts that say how to see the rest."""
    return [
        tool("directory_tree", path=f"{fx}/tree", max_depth=64, hidden=True, no_ignore=True),
        tool("directory_tree", path=f"{fx}/tree", max_depth=1),
        tool("directory_tree"),
        tool("list_directory", path=f"{fx}/tree/wide"),
        tool("list_directory"),
        tool("read_files", paths=[f"{fx}/many.txt", f"{fx}/ws.txt", f"{fx}/twice.txt"]),
        tool("edit_file", path=f"{fx}/many.txt", old_string="a", new_string="b"),
    ]


def confined_calls(fx):
    return [
        tool("read_file", path="/etc/hostname"),
        tool("read_file", path=f"{fx}/ws.txt"),
    ]


class QuietClient(Server):
    """A client without elicitation: outside the roots, the server cannot ask."""

    def initialize(self):
        self.request("initialize", {
            "protocolVersion": "2025-06-18",
            "capabilities": {"roots": {"listChanged": True}},
            "clientInfo": {"name": "rootgrep-answers", "version": "1"},
        })
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def transcript(binary, tree):
    work = tempfile.mkdtemp(prefix="rootgrep-answers-")
    root = os.path.realpath(os.path.join(work, "tree"))
    shutil.copytree(tree, root, symlinks=True)
    fx = prepare(root)
    roots = [os.path.join(fx, "roots", f"r{n:02}") for n in range(12)]
    missing = [os.path.join(fx, "absent", f"m{n:02}") for n in range(12)]
    confine = [arg for r in roots for arg in ("--confine", r)]
    out = []
    try:
        out += session(Server([binary], [root], timeout=60), calls(root), root)
        out += session(QuietClient([binary], roots, timeout=60), many_roots_calls(fx), root)
        out += session(QuietClient([binary], missing, timeout=60), missing_roots_calls(fx), root)
        out += session(Server([binary] + confine, roots, timeout=60), confined_calls(fx), root)
        out += session(QuietClient([binary] + confine, roots, timeout=60), confined_calls(fx), root)
        small = [binary, "--max-output-bytes", "1200"]
        out += session(Server(small, roots[:3] + [fx], timeout=60), small_budget_calls(fx), root)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def unpad_cursor(encoded, root):
    """A `resources/list` cursor (`after:` + URL-safe base64 of a path, unpadded) as the
    path it names, with the copy's root replaced by `ROOT`."""
    try:
        path = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return f'"after:{encoded}"'
    return '"after:' + path.replace(root, "ROOT") + '"'


def session(server, requests, root):
    """One server's answers to `requests`, with the copy's path replaced by `ROOT`."""
    out = []
    try:
        server.initialize()
        server.settle(quiet=0.5)
        for method, params in requests:
            _, msg, _ = server.request(method, params)
            text = json.dumps(msg.get("result", msg.get("error")), sort_keys=True, indent=1)
            text = text.replace(root, "ROOT")
            # resources/list cursors are a base64 path: compare the path they name.
            text = re.sub(r'"after:([A-Za-z0-9_-]+)"', lambda m: unpad_cursor(m.group(1), root), text)
            text = re.sub(r'"(\w*ms|elapsed\w*)": \d+(\.\d+)?', r'"\1": N', text)
            text = re.sub(r"\b\d+(\.\d+)? ?ms\b", "N ms", text)
            shown = json.dumps(params).replace(root, "ROOT")[:300]
            out.append(f"### {method} {shown}\n{text}")
    finally:
        server.close()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--tree", required=True)
    ap.add_argument("--save", help="directory to write both transcripts to (a.txt, b.txt)")
    args = ap.parse_args()
    a, b = transcript(args.a, args.tree), transcript(args.b, args.tree)
    if args.save:
        os.makedirs(args.save, exist_ok=True)
        for name, lines in (("a.txt", a), ("b.txt", b)):
            with open(os.path.join(args.save, name), "w") as f:
                f.write("\n".join(lines) + "\n")
    differ = 0
    for left, right in zip(a, b):
        if left != right:
            differ += 1
            import difflib
            sys.stdout.write("".join(difflib.unified_diff(
                left.splitlines(True), right.splitlines(True), "a", "b", n=2))[:4000])
    print(f"{len(a)} calls, {differ} differ")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
