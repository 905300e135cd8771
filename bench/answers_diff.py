#!/usr/bin/env python3
"""Answers of every tool, from two server builds, on copies of one tree: prints what differs.

    python3 bench/answers_diff.py --a OLD_BINARY --b NEW_BINARY --tree DIR

Used to check that a restructuring changes no answer: each build gets a fresh copy of
`--tree` (writes happen on the copy), answers the same sequence of calls (tools/list,
resources/list, prompts/list, completion, and each tool with typical and failing
arguments), and the two transcripts are compared after the copy's path is replaced by
`ROOT` (timings in milliseconds are masked). Exit 1 when they differ.
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import Server  # noqa: E402


def calls(root):
    def tool(name, **args):
        return ("tools/call", {"name": name, "arguments": args})
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
    ]


def transcript(binary, tree):
    work = tempfile.mkdtemp(prefix="rootgrep-answers-")
    root = os.path.realpath(os.path.join(work, "tree"))
    shutil.copytree(tree, root, symlinks=True)
    server = Server([binary], [root], timeout=60)
    out = []
    try:
        server.initialize()
        server.settle(quiet=0.5)
        for method, params in calls(root):
            _, msg, _ = server.request(method, params)
            text = json.dumps(msg.get("result", msg.get("error")), sort_keys=True, indent=1)
            text = text.replace(root, "ROOT")
            text = re.sub(r'"(\w*ms|elapsed\w*)": \d+(\.\d+)?', r'"\1": N', text)
            text = re.sub(r"\b\d+(\.\d+)? ?ms\b", "N ms", text)
            out.append(f"### {method} {json.dumps(params).replace(root, 'ROOT')}\n{text}")
    finally:
        server.close()
        shutil.rmtree(work, ignore_errors=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--tree", required=True)
    args = ap.parse_args()
    a, b = transcript(args.a, args.tree), transcript(args.b, args.tree)
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
