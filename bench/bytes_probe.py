#!/usr/bin/env python3
"""What rootgrep's answers cost in bytes: `tools/list` (per tool: description, input schema,
output schema), and for each query shape the text a model reads and the structured content
a client reads, as sent (compact JSON), with their ratio.

    python3 bench/bytes_probe.py --bin target/release/rootgrep --root bench-corpora/nuttx \
        [--cases bench/cases/bytes.json] [--var NAME=VALUE]... [--json OUT] [-- SERVER_ARGS...]

The server is started with the root as its DIR argument (no client roots), and list_roots is
polled until the file, symbol and search indexes are ready, so every answer comes from them.
Each case runs once, in order, in one session: cases that may show lines another case
showed say `"repeat": true`, or the session's memory of what it showed would shorten them.
Columns:

  text        bytes of the text content as the model reads it (UTF-8)
  text sent   the same as a JSON string on the wire (quotes and escapes)
  structured  bytes of structuredContent as compact JSON (0 when the tool has none)
  total       the whole tools/call result as sent
  s/t         structured / text sent
"""

import argparse
import json
import os
import subprocess
import sys
import time


def compact(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def size(value):
    return len(compact(value).encode())


class Server:
    def __init__(self, command, cwd):
        self.proc = subprocess.Popen(
            command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL)
        self.next_id = 0

    def request(self, method, params):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write((compact(message) + "\n").encode())
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its stdout")
            answer = json.loads(line)
            if answer.get("id") == self.next_id and "method" not in answer:
                return answer

    def notify(self, method):
        self.proc.stdin.write((compact({"jsonrpc": "2.0", "method": method}) + "\n").encode())
        self.proc.stdin.flush()

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def substitute(value, variables):
    if isinstance(value, str):
        for name, text in variables.items():
            value = value.replace("{" + name + "}", text)
        return value
    if isinstance(value, list):
        return [substitute(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, variables) for k, v in value.items()}
    return value


def wait_ready(server, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        roots = server.request("tools/call", {"name": "list_roots", "arguments": {}})
        text = roots["result"]["content"][0]["text"]
        if "index: fresh" in text and "symbols: ready" in text and "search: ready" in text:
            return True
        time.sleep(2)
    return False


def tools_list(server):
    listed = server.request("tools/list", {})["result"]
    rows = []
    for tool in listed["tools"]:
        rows.append({
            "tool": tool["name"],
            "description": len(tool.get("description", "").encode()),
            "input": size(tool.get("inputSchema", {})),
            "output": size(tool["outputSchema"]) if "outputSchema" in tool else 0,
            "total": size(tool),
        })
    return size(listed), rows


def measure(server, case):
    answer = server.request("tools/call", {"name": case["tool"], "arguments": case["arguments"]})
    result = answer["result"]
    text = "".join(b.get("text", "") for b in result.get("content", []) if b["type"] == "text")
    structured = result.get("structuredContent")
    row = {
        "case": case["name"],
        "tool": case["tool"],
        "text": len(text.encode()),
        "text_sent": len(json.dumps(text, ensure_ascii=False).encode()),
        "structured": size(structured) if structured is not None else 0,
        "total": size(result),
        "error": bool(result.get("isError")),
    }
    row["ratio"] = row["structured"] / row["text_sent"] if row["structured"] else 0.0
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--cases", default=os.path.join(os.path.dirname(__file__), "cases", "bytes.json"))
    parser.add_argument("--var", action="append", default=[])
    parser.add_argument("--json")
    parser.add_argument("--no-wait", action="store_true", help="do not wait for the indexes")
    parser.add_argument("server_args", nargs="*")
    args = parser.parse_args()
    root = os.path.realpath(args.root)
    variables = {"ROOT": root}
    for item in args.var:
        name, _, value = item.partition("=")
        variables[name] = value
    with open(args.cases) as f:
        cases = substitute(json.load(f)["cases"], variables)
    server = Server([os.path.realpath(args.bin), *args.server_args, root], root)
    server.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "bytes-probe", "version": "1"}})
    server.notify("notifications/initialized")
    if not args.no_wait and not wait_ready(server, 900):
        print("warning: the indexes were not ready after 15 minutes", file=sys.stderr)
    listed, tools = tools_list(server)
    rows = [measure(server, case) for case in cases]
    server.close()

    print(f"tools/list: {listed:,} bytes ({len(tools)} tools)\n")
    print("| tool | description | input schema | output schema | whole entry |")
    print("|---|---:|---:|---:|---:|")
    for t in tools:
        print(f"| {t['tool']} | {t['description']:,} | {t['input']:,} | {t['output']:,} | {t['total']:,} |")
    print()
    print("| case | tool | text | text sent | structured | total | s/t |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        ratio = f"{r['ratio']:.2f}" if r["structured"] else "—"
        flag = " (error)" if r["error"] else ""
        print(f"| {r['case']}{flag} | {r['tool']} | {r['text']:,} | {r['text_sent']:,} | "
              f"{r['structured']:,} | {r['total']:,} | {ratio} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tools_list": listed, "tools": tools, "cases": rows}, f, indent=1)


if __name__ == "__main__":
    main()
