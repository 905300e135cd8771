// Interop: the official MCP TypeScript SDK client (@modelcontextprotocol/sdk) drives the
// rootgrep binary over stdio, as a Node-based host would.
//
//   node --test interop.test.mjs          (or ./run.sh, which installs the pinned SDK first)
//
// The server under test is $ROOTGREP_BIN, or ../../../target/debug/rootgrep relative to this
// file. Each test starts its own server in a fresh temp workspace: a root directory with a few
// files, and a sibling `outside/` directory (never a root) holding `secret.txt`. Every request
// has a timeout (the SDK cancels it on the wire when it fires), and so do connect and close,
// so a server that stops answering fails the test instead of hanging the run.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { accessSync, constants, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
    CreateMessageRequestSchema,
    ElicitRequestSchema,
    LATEST_PROTOCOL_VERSION,
    ListRootsRequestSchema,
    SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOTGREP_BIN = resolve(HERE, process.env.ROOTGREP_BIN || "../../../target/debug/rootgrep");

const STEP_MS = 10_000; // any single request, connect or close
const TEST_MS = 30_000; // a whole test, server start and shutdown included
const POLL_MS = 5_000; // waiting for an asynchronous effect (the server fetching roots)

// What rootgrep's README promises through `initialize`.
const SERVER_PROTOCOL_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

const TEMPLATE = "file:///{+path}";

// --------------------------------------------------------------------------------------
// Workspace and server harness
// --------------------------------------------------------------------------------------

function binaryOrFail() {
    try {
        accessSync(ROOTGREP_BIN, constants.X_OK);
    } catch {
        assert.fail(`rootgrep binary not found at ${ROOTGREP_BIN}: run \`cargo build\` or set ROOTGREP_BIN`);
    }
    return ROOTGREP_BIN;
}

/**
 * A test with a budget, a fresh workspace and LIFO cleanups (the server is closed before its
 * workspace is removed). A failure carries the tail of the server's stderr.
 */
function itest(name, options, fn) {
    if (typeof options === "function") [fn, options] = [options, {}];
    test(name, { timeout: TEST_MS, ...options }, async (t) => {
        const ctx = { t, cleanups: [], stderr: () => "" };
        ctx.ws = makeWorkspace(ctx);
        try {
            await fn(ctx);
        } catch (error) {
            const tail = ctx.stderr().trim();
            if (tail && error instanceof Error) error.message += `\n--- rootgrep stderr (tail) ---\n${tail}`;
            throw error;
        } finally {
            for (const cleanup of ctx.cleanups.reverse()) await cleanup();
        }
    });
}

/** A temp dir holding `workspace/` (the root the client declares) and `outside/`. */
function makeWorkspace(ctx) {
    const base = realpathSync(mkdtempSync(join(tmpdir(), "rootgrep-ts-interop-")));
    ctx.cleanups.push(() => rmSync(base, { recursive: true, force: true }));
    const root = join(base, "workspace");
    const outside = join(base, "outside");
    mkdirSync(join(root, "src"), { recursive: true });
    mkdirSync(join(root, "docs"));
    mkdirSync(outside);
    writeFileSync(join(root, "README.md"), "# Demo\n\nA tiny project.\n");
    writeFileSync(join(root, "src", "main.rs"), 'fn main() {\n    println!("hello");\n}\n');
    writeFileSync(join(root, "src", "lib.rs"), "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n");
    writeFileSync(join(root, "docs", "guide.md"), "Guide\n");
    writeFileSync(join(outside, "secret.txt"), "top secret\n");
    return { base, root, outside, secret: join(outside, "secret.txt") };
}

/** Rejects after `ms` with a message naming the step. */
async function bounded(promise, what, ms = STEP_MS) {
    let timer;
    const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    });
    try {
        return await Promise.race([promise, timeout]);
    } finally {
        clearTimeout(timer);
    }
}

const opts = { timeout: STEP_MS }; // per-request SDK timeout (sends notifications/cancelled)

/**
 * Launch rootgrep and connect an SDK client, as a host would.
 *
 * host.roots: the paths answered to `roots/list` (undefined: no roots capability).
 * host.elicit: answers `elicitation/create` (undefined: no elicitation capability).
 * host.sample: answers `sampling/createMessage` (undefined: no sampling capability).
 * Records what the server asked in host.rootsRequests and host.questions.
 */
async function connect(ctx, host = {}) {
    const capabilities = {};
    if (host.roots) capabilities.roots = { listChanged: true };
    if (host.elicit) capabilities.elicitation = {};
    if (host.sample) capabilities.sampling = {};
    host.rootsRequests = 0;
    host.questions = [];
    host.samplings = [];

    const client = new Client({ name: "rootgrep-ts-interop", version: "0.0.0" }, { capabilities });
    if (host.roots) {
        client.setRequestHandler(ListRootsRequestSchema, async () => {
            host.rootsRequests += 1;
            return { roots: host.roots.map((p) => ({ uri: pathToFileURL(p).href, name: basename(p) })) };
        });
    }
    if (host.elicit) {
        client.setRequestHandler(ElicitRequestSchema, async (request) => {
            host.questions.push(request.params);
            return host.elicit(request.params);
        });
    }
    if (host.sample) {
        client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
            host.samplings.push(request.params);
            return host.sample(request.params);
        });
    }

    // Every tool offered (the default set leaves a few out), so the SDK checks every
    // structuredContent against its tool's outputSchema.
    const transport = new StdioClientTransport({ command: binaryOrFail(), args: ["--tools", "all"], stderr: "pipe" });
    let stderr = "";
    transport.stderr?.on("data", (chunk) => {
        stderr = (stderr + chunk).slice(-4000);
    });
    // Client.connect() hands the negotiated version to transports that take it (HTTP ones do);
    // stdio does not, so this hook is how the test learns what was negotiated.
    let negotiated;
    transport.setProtocolVersion = (version) => {
        negotiated = version;
    };
    const faults = [];
    client.onerror = (error) => faults.push(error);

    ctx.stderr = () => stderr;
    ctx.cleanups.push(() => bounded(client.close(), "client.close()").catch(() => {}));

    await bounded(client.connect(transport, opts), "initialize handshake");
    return { client, host, faults, negotiated: () => negotiated };
}

async function call(client, name, args = {}) {
    return client.callTool({ name, arguments: args }, undefined, opts);
}

function textOf(result) {
    return result.content
        .filter((block) => block.type === "text")
        .map((block) => block.text)
        .join("");
}

function ok(result) {
    assert.ok(!result.isError, `tool error: ${textOf(result)}`);
    return textOf(result);
}

/**
 * Run `fn` with the SDK's Ajv warnings about unknown JSON Schema formats gathered into one
 * diagnostic line. rootgrep's outputSchemas carry schemars' `"format": "uint"`/`"uint64"`;
 * JSON Schema treats unknown formats as annotations, and Ajv (which the SDK compiles every
 * outputSchema with on tools/list) warns about each of them on the console.
 */
async function quietSchemaWarnings(ctx, fn) {
    const formats = new Set();
    const warn = console.warn;
    console.warn = (...args) => {
        const match = /^unknown format "([^"]+)" ignored in schema/.exec(String(args[0]));
        if (match) formats.add(match[1]);
        else warn(...args);
    };
    try {
        return await fn();
    } finally {
        console.warn = warn;
        if (formats.size) ctx.t.diagnostic(`outputSchemas use formats Ajv does not know: ${[...formats].join(", ")}`);
    }
}

/** `cat -n` style rows, as read_file renders them. */
/** A path of a structured result made absolute: joined to its `root` when it has one. */
function absolute(structured, path) {
    return structured?.root ? join(structured.root, path) : path;
}

function numbered(lines, first = 1) {
    return lines.map((line, i) => `${first + i}\t${line}`);
}

/** Poll list_roots until the server shows the client's roots (it fetches them asynchronously). */
async function waitForClientRoots(client, expected) {
    const deadline = Date.now() + POLL_MS;
    let listing;
    for (;;) {
        const result = await call(client, "list_roots");
        ok(result);
        listing = result.structuredContent;
        const paths = (listing?.roots ?? []).map((r) => r.path);
        if (listing?.source === "client" && JSON.stringify(paths) === JSON.stringify(expected)) return listing;
        if (Date.now() > deadline) {
            assert.fail(`list_roots still shows ${JSON.stringify(listing)} after ${POLL_MS} ms; expected client roots ${expected}`);
        }
        await new Promise((r) => setTimeout(r, 50));
    }
}

// --------------------------------------------------------------------------------------
// Tests
// --------------------------------------------------------------------------------------

itest("initialize: server info and negotiated protocol version", async (ctx) => {
    const { ws } = ctx;
    const { client, faults, negotiated } = await connect(ctx, { roots: [ws.root] });

    const info = client.getServerVersion();
    assert.equal(info?.name, "rootgrep");
    assert.equal(typeof info?.version, "string");

    // The SDK offers its latest version (2025-11-25 for 1.32.x) and accepts any of its
    // SUPPORTED_PROTOCOL_VERSIONS back; whatever comes back must be one rootgrep supports.
    const version = negotiated();
    assert.ok(SUPPORTED_PROTOCOL_VERSIONS.includes(version), `SDK accepted ${version}`);
    assert.ok(SERVER_PROTOCOL_VERSIONS.includes(version), `negotiated ${version}`);
    if (LATEST_PROTOCOL_VERSION === "2025-11-25") assert.equal(version, "2025-11-25");

    const caps = client.getServerCapabilities();
    assert.ok(caps?.tools, "server declares tools");
    assert.ok(caps?.resources, "server declares resources");
    assert.ok(caps?.completions, "server declares completions");

    await client.ping(opts);
    assert.deepEqual(faults, [], "no transport or protocol faults");
});

itest("tools/list: grep, glob, read_file; every tool has an object inputSchema", async (ctx) => {
    const { client } = await connect(ctx, { roots: [ctx.ws.root] });

    const { tools } = await quietSchemaWarnings(ctx, () => client.listTools(undefined, opts));
    const names = tools.map((tool) => tool.name);
    for (const name of ["grep", "glob", "read_file", "list_directory", "list_roots"]) {
        assert.ok(names.includes(name), `${name} missing from ${names}`);
    }
    assert.equal(new Set(names).size, names.length, "tool names are unique");
    for (const tool of tools) {
        assert.equal(tool.inputSchema?.type, "object", `${tool.name}: inputSchema.type`);
        if (tool.outputSchema) assert.equal(tool.outputSchema.type, "object", `${tool.name}: outputSchema.type`);
    }
    const grep = tools.find((tool) => tool.name === "grep");
    assert.ok(grep.inputSchema.properties?.pattern, "grep takes a pattern");
    assert.ok(grep.inputSchema.required?.includes("pattern"), "grep requires a pattern");
});

itest("tools/call: grep, glob and read_file (structuredContent checked against outputSchema)", async (ctx) => {
    const { ws } = ctx;
    const mainRs = join(ws.root, "src", "main.rs");
    const libRs = join(ws.root, "src", "lib.rs");
    const { client } = await connect(ctx, { roots: [ws.root] });
    await waitForClientRoots(client, [ws.root]);
    // After tools/list the SDK validates every structuredContent against the tool's outputSchema
    // (and fails the call when a tool with an outputSchema returns none).
    await quietSchemaWarnings(ctx, () => client.listTools(undefined, opts));

    // grep, default mode: the matching files, sorted, relative to the one root (which the
    // structured result names once).
    const rel = (path) => relative(ws.root, path);
    let result = await call(client, "grep", { pattern: "fn \\w+\\(" });
    assert.deepEqual(ok(result).split("\n").filter(Boolean), [rel(libRs), rel(mainRs)]);
    assert.deepEqual(result.structuredContent?.files.map((f) => absolute(result.structuredContent, f)), [libRs, mainRs]);

    // grep, content mode: grouped by file, `N:text` rows; the same rows structured.
    result = await call(client, "grep", { pattern: "println", output_mode: "content" });
    const lines = ok(result).split("\n");
    assert.deepEqual(lines.slice(0, 2), [rel(mainRs), '2:    println!("hello");']);
    assert.match(lines[1], /^\d+:/);
    assert.deepEqual(result.structuredContent?.matches[0].matches, [[2, '    println!("hello");']]);
    // With context, the matching row holds the lines beside it (validated too).
    result = await call(client, "grep", { pattern: "println", output_mode: "content", "-C": 1 });
    ok(result);
    assert.deepEqual(result.structuredContent?.matches[0].matches, [
        [2, '    println!("hello");', ["fn main() {"], ["}"]],
    ]);

    // glob: the pattern matches paths relative to the root.
    result = await call(client, "glob", { pattern: "**/*.rs", sort: "path" });
    assert.deepEqual(ok(result).split("\n").slice(0, 2), [rel(libRs), rel(mainRs)]);
    result = await call(client, "glob", { pattern: "src/m*.rs" });
    assert.deepEqual(result.structuredContent?.files.map((f) => absolute(result.structuredContent, f)), [mainRs]);

    // read_file: numbered lines; relative paths resolve against the root.
    result = await call(client, "read_file", { path: "src/main.rs" });
    assert.deepEqual(ok(result).split("\n").slice(0, 3), numbered(["fn main() {", '    println!("hello");', "}"]));
    result = await call(client, "read_file", { path: mainRs, offset: 2, limit: 1 });
    assert.equal(ok(result).split("\n")[0], numbered(['    println!("hello");'], 2)[0]);

    // A mistake the model can fix is a tool result with isError, not a protocol error.
    result = await call(client, "read_file", { path: "src/nope.rs" });
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent?.error?.reason, "not_found");
    // The SDK validates an error's structuredContent against the outputSchema too: grep's
    // schema admits the error object.
    result = await call(client, "grep", { pattern: "(unclosed" });
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent?.error?.reason, "invalid_argument");
});

itest("tools/call: symbols, outline, references, read_file + symbol (structuredContent checked against outputSchema)", async (ctx) => {
    const { ws } = ctx;
    const libRs = join(ws.root, "src", "lib.rs");
    const { client } = await connect(ctx, { roots: [ws.root] });
    await waitForClientRoots(client, [ws.root]);
    await quietSchemaWarnings(ctx, () => client.listTools(undefined, opts));

    let result = await call(client, "symbols", { query: "add" });
    ok(result);
    // Per file, rows of [line, end_line, kind, name, signature].
    assert.deepEqual(
        result.structuredContent?.files.flatMap(([path, rows]) =>
            rows.map(([line, , kind, name]) => [name, kind, absolute(result.structuredContent, path), line])),
        [["add", "function", libRs, 1]],
    );
    result = await call(client, "outline", { path: libRs });
    assert.equal(ok(result).split("\n")[1], "1-3 function pub fn add(a: i32, b: i32) -> i32 {");
    result = await call(client, "references", { name: "add" });
    ok(result);
    assert.deepEqual(result.structuredContent?.files[0].definitions, [1]);
    result = await call(client, "read_file", { path: libRs, symbol: "add" });
    assert.deepEqual(ok(result).split("\n").slice(1, 4), numbered(["pub fn add(a: i32, b: i32) -> i32 {", "    a + b", "}"]));
    result = await call(client, "search", { query: "add two numbers" });
    ok(result);
    assert.deepEqual(
        result.structuredContent?.files
            .flatMap((f) => f.results.map((r) => [r.name, r.kind, absolute(result.structuredContent, f.path), r.line, r.end_line]))
            .slice(0, 1),
        [["add", "function", libRs, 1, 3]],
    );
});

itest("roots: the client's roots/list answer is the boundary (list_roots source: client)", async (ctx) => {
    const { ws } = ctx;
    const host = { roots: [ws.root] };
    const { client } = await connect(ctx, host);

    const listing = await waitForClientRoots(client, [ws.root]);
    assert.equal(listing.source, "client");
    // The root named by its path (the client's URI decoded), as every answer names paths.
    assert.equal(pathToFileURL(listing.roots[0].path).href, pathToFileURL(ws.root).href);
    assert.ok(host.rootsRequests >= 1, "the server asked roots/list");

    // A relative path resolves against the client's root, not the server's cwd.
    const text = ok(await call(client, "read_file", { path: "docs/guide.md" }));
    assert.deepEqual(text.split("\n").slice(0, 1), numbered(["Guide"]));
});

itest("elicitation: accept {allow: true} grants an out-of-root read", async (ctx) => {
    const { ws } = ctx;
    const host = { roots: [ws.root], elicit: async () => ({ action: "accept", content: { allow: true } }) };
    const { client } = await connect(ctx, host);
    await waitForClientRoots(client, [ws.root]);

    const text = ok(await call(client, "read_file", { path: ws.secret }));
    assert.deepEqual(text.split("\n").slice(0, 1), numbered(["top secret"]));

    assert.equal(host.questions.length, 1, "asked exactly once");
    const [question] = host.questions;
    assert.equal(question.mode ?? "form", "form");
    assert.ok(question.message.includes(ws.secret), `the question names the path: ${question.message}`);
    const schema = question.requestedSchema;
    assert.equal(schema.type, "object");
    assert.equal(schema.properties.allow.type, "boolean");
    assert.equal(schema.properties.remember.type, "boolean");
    assert.ok(schema.required?.includes("allow"));
    assert.ok(!schema.required?.includes("remember"));
});

itest("elicitation: decline refuses the out-of-root read with isError", async (ctx) => {
    const { ws } = ctx;
    const host = { roots: [ws.root], elicit: async () => ({ action: "decline" }) };
    const { client } = await connect(ctx, host);
    await waitForClientRoots(client, [ws.root]);

    const result = await call(client, "read_file", { path: ws.secret });
    assert.equal(result.isError, true, `expected a tool error, got: ${textOf(result)}`);
    assert.ok(!textOf(result).includes("top secret"), "the secret is not shown");
    assert.ok(textOf(result).includes(ws.secret), "the refusal names the path");
    assert.equal(host.questions.length, 1);
});

itest("sampling: search with expand asks the host's model and searches with its terms", async (ctx) => {
    const { ws } = ctx;
    writeFileSync(join(ws.root, "journal.c"), "int journal_flush_deadline(struct journal *j)\n{\n  return j->pending > LIMIT;\n}\n");
    writeFileSync(join(ws.root, "notes.c"), "/* we give up waiting on the disk when it is slow */\nint wait_disk_slow(void)\n{\n  return 0;\n}\n");
    const host = {
        roots: [ws.root],
        sample: async () => ({ role: "assistant", model: "tiny-model", content: { type: "text", text: "journal_flush_deadline" } }),
    };
    const { client } = await connect(ctx, host);
    await waitForClientRoots(client, [ws.root]);
    const names = (r) => (r.structuredContent?.files ?? []).flatMap((f) => f.results.map((x) => x.name));
    const question = "when do we give up waiting on the disk";

    const plain = await call(client, "search", { query: question });
    ok(plain);
    assert.equal(host.samplings.length, 0, "not asked without expand");
    assert.equal(names(plain)[0], "wait_disk_slow");

    const expanded = await call(client, "search", { query: question, expand: true });
    const text = ok(expanded);
    assert.equal(host.samplings.length, 1);
    const [asked] = host.samplings;
    assert.ok(asked.systemPrompt.includes("code terms"), asked.systemPrompt);
    assert.ok(asked.maxTokens <= 200);
    assert.equal(names(expanded)[0], "journal_flush_deadline", JSON.stringify(names(expanded)));
    assert.ok(text.includes("expanded by the host's model (tiny-model) with: journal_flush_deadline"), text);
});

itest("resources: the file:///{+path} template, and resources/read of a file URI", async (ctx) => {
    const { ws } = ctx;
    const { client } = await connect(ctx, { roots: [ws.root] });
    await waitForClientRoots(client, [ws.root]);

    const { resourceTemplates } = await client.listResourceTemplates(undefined, opts);
    assert.ok(
        resourceTemplates.some((tpl) => tpl.uriTemplate === TEMPLATE),
        `templates: ${JSON.stringify(resourceTemplates)}`,
    );

    const uri = pathToFileURL(join(ws.root, "src", "main.rs")).href;
    const { contents } = await client.readResource({ uri }, opts);
    assert.equal(contents.length, 1);
    assert.equal(contents[0].uri, uri);
    assert.equal(contents[0].text, 'fn main() {\n    println!("hello");\n}\n');
});

// The values below are POSIX paths without their leading slash; Windows completion (drive
// letters, backslashes, any case) is covered by the wire tests (tests/it/windows.rs).
const POSIX_ONLY = { skip: process.platform === "win32" && "written for POSIX paths" };

itest("completion/complete: the template's path completes, and the expanded URI reads", POSIX_ONLY, async (ctx) => {
    const { ws } = ctx;
    const { client } = await connect(ctx, { roots: [ws.root] });
    await waitForClientRoots(client, [ws.root]);

    const complete = async (value) => {
        const { completion } = await client.complete(
            { ref: { type: "ref/resource", uri: TEMPLATE }, argument: { name: "path", value } },
            opts,
        );
        assert.ok(Array.isArray(completion.values), JSON.stringify(completion));
        assert.ok(completion.values.length <= 100, "at most 100 values (spec)");
        return completion.values;
    };
    // {+path} is the part after file:/// — an absolute path without its leading slash.
    const rootValue = ws.root.slice(1);

    // An empty value offers the roots.
    assert.deepEqual(await complete(""), [`${rootValue}/`]);
    // Then a directory's children: prefix matches first (then looser ones, e.g. docs/ for "s").
    assert.equal((await complete(`${rootValue}/s`))[0], `${rootValue}/src/`);
    const values = await complete(`${rootValue}/src/ma`);
    assert.equal(values[0], `${rootValue}/src/main.rs`);
    // Never anything outside the roots.
    assert.deepEqual(await complete(`${ws.outside.slice(1)}/`), []);

    // The template expanded with a completed value is a readable resource.
    const { contents } = await client.readResource({ uri: `file:///${values[0]}` }, opts);
    assert.match(contents[0].text, /fn main/);
});

itest("the server binary under test runs", () => {
    const run = spawnSync(binaryOrFail(), ["--version"], { encoding: "utf8", timeout: STEP_MS });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^rootgrep /);
});
