//! Test support: spawn the real `rootgrep` binary and speak newline-delimited JSON-RPC to
//! it, as a host would. Every stdout line must be a JSON message (stdout is the protocol);
//! a line that is not fails the test.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub use crate::probe::{cpu_ticks, rss_kib};

pub const WAIT: Duration = Duration::from_secs(10);

pub struct Client {
    pub child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Result<Value, String>>,
    backlog: VecDeque<Value>,
    next_id: i64,
}

impl Client {
    /// Starts `rootgrep ARGS` in `cwd`.
    pub fn spawn(args: &[&str], cwd: &Path) -> Client {
        Client::spawn_with_env(args, cwd, &[])
    }

    /// Starts `rootgrep ARGS` in `cwd` with extra environment variables.
    pub fn spawn_with_env(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Client {
        let mut command = Command::new(env!("CARGO_BIN_EXE_rootgrep"));
        command.args(args).envs(env.iter().copied());
        Client::spawn_command(command, cwd)
    }

    /// Starts `rootgrep ARGS` in `cwd` with its address space limited to `max_kib` KiB
    /// (`ulimit -v` in a shell that then execs the server, so the pid is the server's):
    /// a runaway allocation makes the server fail instead of the machine swap.
    #[cfg(unix)]
    pub fn spawn_limited(args: &[&str], cwd: &Path, max_kib: u64) -> Client {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(format!("ulimit -v {max_kib} && exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_rootgrep"))
            .args(args);
        Client::spawn_command(command, cwd)
    }

    /// Starts `rootgrep ARGS` in `cwd` as the user `uid`/`gid` (the test must run as root
    /// to switch), as an unprivileged user would run it.
    /// The binary is copied into `bin_dir` first: the build's own directory may be
    /// unreachable for that user (a checkout under a private directory).
    #[cfg(target_os = "linux")]
    pub fn spawn_as(uid: u32, gid: u32, args: &[&str], cwd: &Path, bin_dir: &Path) -> Client {
        use std::os::unix::fs::PermissionsExt;
        use std::os::unix::process::CommandExt;
        let bin = bin_dir.join("rootgrep-as-user");
        std::fs::copy(env!("CARGO_BIN_EXE_rootgrep"), &bin).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut command = Command::new(&bin);
        command.args(args).uid(uid).gid(gid);
        Client::spawn_command(command, cwd)
    }

    /// Windows has no `ulimit`: the server starts without an address-space limit (a job
    /// object would be the equivalent; not set up here).
    #[cfg(windows)]
    pub fn spawn_limited(args: &[&str], cwd: &Path, _max_kib: u64) -> Client {
        Client::spawn(args, cwd)
    }

    fn spawn_command(mut command: Command, cwd: &Path) -> Client {
        // Servers store their indexes in the tests' own cache directory, never the user's
        // (a test that needs its own passes --cache-dir).
        let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("it-cache");
        let mut child = command
            .current_dir(cwd)
            .env_remove("RUST_LOG")
            .env("XDG_CACHE_HOME", &cache)
            .env("LOCALAPPDATA", &cache)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn rootgrep");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let parsed = serde_json::from_str::<Value>(&line)
                    .map_err(|_| format!("non-JSON line on stdout: {line:?}"));
                if tx.send(parsed).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Client {
            child,
            stdin,
            rx,
            backlog: VecDeque::new(),
            next_id: 100,
        }
    }

    pub fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string());
    }

    pub fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Writes raw bytes followed by a newline (for lines that are not valid UTF-8).
    pub fn send_bytes(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Writes raw bytes as they are (no newline, no flush): for pipelining many lines.
    pub fn write_unflushed(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
    }

    pub fn flush(&mut self) {
        self.stdin.as_mut().expect("stdin open").flush().unwrap();
    }

    /// A second handle on the server's stdin, for writing from another thread while this
    /// one reads the answers.
    #[cfg(unix)]
    pub fn stdin_clone(&self) -> std::fs::File {
        use std::os::fd::AsFd;
        let fd = self.stdin.as_ref().expect("stdin open").as_fd();
        std::fs::File::from(fd.try_clone_to_owned().expect("dup stdin"))
    }

    /// A second handle on the server's stdin (Windows: a duplicated pipe handle).
    #[cfg(windows)]
    pub fn stdin_clone(&self) -> std::fs::File {
        use std::os::windows::io::AsHandle;
        let handle = self.stdin.as_ref().expect("stdin open").as_handle();
        std::fs::File::from(handle.try_clone_to_owned().expect("dup stdin"))
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Calls a tool and returns the whole response (result or error), or `None` when no
    /// answer came within `timeout`.
    pub fn call_within(
        &mut self,
        name: &str,
        arguments: Value,
        timeout: Duration,
    ) -> Option<Value> {
        let id = self.start("tools/call", json!({"name":name,"arguments":arguments}));
        self.response(id, timeout)
    }

    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next message from the server (backlog first), or `None` after `timeout`.
    pub fn recv(&mut self, timeout: Duration) -> Option<Value> {
        if let Some(message) = self.backlog.pop_front() {
            return Some(message);
        }
        self.recv_wire(timeout)
    }

    fn recv_wire(&mut self, timeout: Duration) -> Option<Value> {
        match self.rx.recv_timeout(timeout) {
            Ok(Ok(message)) => Some(message),
            Ok(Err(line)) => panic!("{line}"),
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Waits for the first message matching `pred`, keeping the others in the backlog.
    pub fn wait_for(&mut self, timeout: Duration, pred: impl Fn(&Value) -> bool) -> Option<Value> {
        if let Some(pos) = self.backlog.iter().position(&pred) {
            return self.backlog.remove(pos);
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            let message = self.recv_wire(left)?;
            if pred(&message) {
                return Some(message);
            }
            self.backlog.push_back(message);
        }
    }

    /// Messages received so far that match `pred` (draining the wire for `settle`).
    pub fn collect(&mut self, settle: Duration, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + settle;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match self.recv_wire(left) {
                Some(message) => self.backlog.push_back(message),
                None => break,
            }
        }
        let (matching, rest): (Vec<Value>, Vec<Value>) =
            self.backlog.drain(..).partition(|m| pred(m));
        self.backlog = rest.into();
        matching
    }

    pub fn next_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Sends a request and returns its id.
    pub fn start(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id();
        self.send(json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}));
        id
    }

    /// Waits for the response to `id`.
    pub fn response(&mut self, id: i64, timeout: Duration) -> Option<Value> {
        self.wait_for(timeout, |m| {
            m.get("id") == Some(&json!(id)) && m.get("method").is_none()
        })
    }

    /// Sends a request and waits for its response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start(method, params);
        self.response(id, WAIT)
            .unwrap_or_else(|| panic!("no response to {method}"))
    }

    /// A server→client request with this method.
    pub fn server_request(&mut self, method: &str, timeout: Duration) -> Option<Value> {
        self.wait_for(timeout, |m| {
            m.get("method").and_then(Value::as_str) == Some(method) && m.get("id").is_some()
        })
    }

    pub fn respond(&mut self, id: &Value, result: Value) {
        self.send(json!({"jsonrpc":"2.0","id":id,"result":result}));
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc":"2.0","method":method,"params":params}));
    }

    /// `initialize` with the given capabilities; returns the result. Does not send
    /// `initialized`.
    pub fn initialize_only(&mut self, capabilities: Value) -> Value {
        let response = self.request(
            "initialize",
            json!({"protocolVersion":"2025-11-25","capabilities":capabilities,
                   "clientInfo":{"name":"wire-test","version":"1"}}),
        );
        response["result"].clone()
    }

    /// Full handshake without roots: initialize + initialized.
    pub fn handshake(&mut self, capabilities: Value) -> Value {
        let result = self.initialize_only(capabilities);
        self.notify("notifications/initialized", json!({}));
        result
    }

    /// Handshake declaring roots, answering the first `roots/list` with `roots`.
    pub fn handshake_with_roots(&mut self, extra: Value, roots: &[&Path]) {
        let mut caps = json!({"roots":{"listChanged":true}});
        if let Value::Object(extra) = extra {
            for (k, v) in extra {
                caps[k] = v;
            }
        }
        self.handshake(caps);
        let request = self
            .server_request("roots/list", WAIT)
            .expect("roots/list after initialized");
        self.respond(&request["id"], roots_result(roots));
    }

    /// Calls a tool and returns the result object (panics on a JSON-RPC error).
    pub fn call(&mut self, name: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name":name,"arguments":arguments}));
        assert!(
            response.get("error").is_none(),
            "tools/call {name} failed: {response}"
        );
        response["result"].clone()
    }

    /// Waits for the process to exit; returns its exit code.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn roots_result(roots: &[&Path]) -> Value {
    json!({"roots": roots.iter().map(|p| json!({"uri": uri(p), "name": p.file_name().map(|n| n.to_string_lossy().to_string())})).collect::<Vec<_>>()})
}

pub fn uri(path: &Path) -> String {
    rootgrep_core::roots::file_uri_from_path(path)
}

/// The concatenated text content of a tool result.
pub fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("")
        })
        .unwrap_or_default()
}

pub fn is_error(result: &Value) -> bool {
    result["isError"].as_bool() == Some(true)
}

/// A temp workspace: `app/` (the root) and `outside/` beside it, canonical paths.
pub struct Workspace {
    _tmp: tempfile::TempDir,
    pub base: PathBuf,
    pub app: PathBuf,
    pub outside: PathBuf,
}

pub fn workspace() -> Workspace {
    let tmp = tempfile::tempdir().unwrap();
    // In the form the server keeps and shows paths (`C:\x` on Windows, not `\\?\C:\x`).
    let base = rootgrep_core::roots::canonicalize(tmp.path()).unwrap();
    let app = base.join("app");
    let outside = base.join("outside");
    std::fs::create_dir_all(app.join("src")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        app.join("src/main.rs"),
        "fn main() {\n    println!(\"hi\");\n}\n",
    )
    .unwrap();
    std::fs::write(outside.join("secret.txt"), "TOP-SECRET-CONTENT\n").unwrap();
    std::fs::write(outside.join("other.txt"), "OTHER-CONTENT\n").unwrap();
    Workspace {
        _tmp: tmp,
        base,
        app,
        outside,
    }
}

pub fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The paths in a grep/glob structured result, absolute (none when `files` is absent).
pub fn listed_files(result: &Value) -> Vec<String> {
    listed_paths(result, "files")
}

impl Client {
    /// Every message from now (backlog first) until the response to `id`, which is returned
    /// separately. Panics when that response does not come within `timeout`. Use it with a
    /// later request (a `ping`) as a marker: whatever the server sent before answering the
    /// marker is in the list, so a negative check needs no fixed sleep.
    pub fn read_until_response(&mut self, id: i64, timeout: Duration) -> (Vec<Value>, Value) {
        let mut seen: Vec<Value> = self.backlog.drain(..).collect();
        let is_answer = |m: &Value| m.get("id") == Some(&json!(id)) && m.get("method").is_none();
        if let Some(pos) = seen.iter().position(is_answer) {
            let answer = seen.remove(pos);
            // Keep what came after the answer for later reads.
            self.backlog = seen.split_off(pos).into();
            return (seen, answer);
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .recv_wire(left)
                .unwrap_or_else(|| panic!("no response to id {id} within {timeout:?}"));
            if is_answer(&message) {
                return (seen, message);
            }
            seen.push(message);
        }
    }

    /// Sends a `ping` and returns everything the server sent before answering it (any
    /// answer: a stateless client's plain ping may get an error; it is only a marker).
    pub fn until_ping(&mut self) -> Vec<Value> {
        let id = self.start("ping", json!({}));
        self.read_until_response(id, Duration::from_secs(30)).0
    }

    /// Like [`Client::recv`], with the time the message was taken off the wire.
    pub fn recv_timed(&mut self, timeout: Duration) -> Option<(Instant, Value)> {
        self.recv(timeout).map(|m| (Instant::now(), m))
    }
}

/// Is `m` the response (result or error) to request `id`?
pub fn is_response_to(m: &Value, id: i64) -> bool {
    m.get("id") == Some(&json!(id)) && m.get("method").is_none()
}

/// Is this test run under Wine (`.ci/platforms.sh` sets `ROOTGREP_UNDER_WINE`)? There a
/// debug build's every file open and thread switch goes through wineserver: the same work
/// takes several times as long, and longer again while other tests share the cores.
pub fn under_wine() -> bool {
    std::env::var_os("ROOTGREP_UNDER_WINE").is_some()
}

/// `wait` as a deadline for work whose length is the machine's, not the server's: three
/// times as long under Wine. Only deadlines that bound waiting get it; a bound that proves
/// something (a cancelled search stopped, nothing more arrives) stays far below what the
/// work would take if the server were wrong.
pub fn patience(wait: Duration) -> Duration {
    if under_wine() { wait * 3 } else { wait }
}

/// Removes `dir` and everything below it. On Windows a file the server is reading at that
/// moment (an index build) is only marked for deletion until the server closes it, and its
/// directory cannot be removed meanwhile (Wine lacks POSIX delete semantics): retried for
/// up to 30 s. Elsewhere the first attempt's error is the answer.
pub fn remove_dir_all_patiently(dir: &Path) {
    let started = Instant::now();
    loop {
        match std::fs::remove_dir_all(dir) {
            Ok(()) => return,
            Err(e) if cfg!(windows) && started.elapsed() < Duration::from_secs(30) => {
                eprintln!("removing {}: {e}; retrying", dir.display());
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("removing {}: {e}", dir.display()),
        }
    }
}

/// Waits until the process uses (almost) no CPU over a 500 ms window: at most 3 ticks
/// (30 ms). Returns how long that took, or `None` when it was still busy at `deadline`.
/// A search that kept running would use a large part of a core in every window, even on a
/// loaded machine.
pub fn wait_cpu_idle(pid: u32, deadline: Duration) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < deadline {
        let before = cpu_ticks(pid);
        std::thread::sleep(Duration::from_millis(500));
        if cpu_ticks(pid) - before <= 3 {
            return Some(started.elapsed());
        }
    }
    None
}

/// A regex the engine cannot run on its fast paths (large Unicode classes, bounded
/// repetition): slow per byte in any build.
pub const SLOW_PATTERN: &str = r"\b\w{40,}\b|(\w+\s+){12}\d";

/// Text that never matches [`SLOW_PATTERN`] (words are short, no digits), `lines` lines.
pub fn slow_body(lines: usize) -> String {
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron\n"
        .repeat(lines)
}

/// `files` files under `dir/linked/dNN/`, all hard links to a few files holding `body`: a
/// search reads `files × body.len()` bytes, but creating the tree costs one write per
/// 50,000 files and `files` links (fast, no disk space; file systems cap the links of one
/// file, ext4 at 65,000). Files already there are kept, so it can grow.
pub fn linked_tree(dir: &Path, files: usize, body: &str) {
    const LINKS_PER_SEED: usize = 50_000;
    let seed_for = |n: usize| {
        let seed = match n / LINKS_PER_SEED {
            0 => dir.join("linked/seed.txt"),
            k => dir.join(format!("linked/seed{k}.txt")),
        };
        if !seed.exists() {
            std::fs::create_dir_all(seed.parent().unwrap()).unwrap();
            std::fs::write(&seed, body).unwrap();
        }
        seed
    };
    seed_for(0);
    for n in 1..files {
        let sub = dir.join(format!("linked/d{:02}", n / 100));
        let path = sub.join(format!("f{n:05}.txt"));
        if path.exists() {
            continue;
        }
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::hard_link(seed_for(n), &path).unwrap();
    }
}

/// Waits until the first root is watched and its index fresh (`list_roots`), polling.
pub fn wait_indexed(client: &mut Client) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let roots = client.call("list_roots", json!({}));
        let root = &roots["structuredContent"]["roots"][0];
        if root["watch"] == "watching" && root["index"].as_str().unwrap_or("").starts_with("fresh")
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "root never became watched and indexed: {root}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Checks a request that was just cancelled (`notifications/cancelled` already sent): the
/// server's CPU goes idle (the work stopped; generous bound for a loaded machine), no
/// response to `id` ever arrives (everything up to a later ping's answer is read), and no
/// progress for it follows once the work stopped. The work must be long by construction,
/// so that a server ignoring the cancel would still be busy and would answer later.
pub fn assert_cancelled_quietly(client: &mut Client, id: i64) {
    let pid = client.pid();
    let within = patience(Duration::from_secs(5));
    let idle = wait_cpu_idle(pid, within);
    assert!(
        idle.is_some(),
        "the server still burns CPU {within:?} after the cancel"
    );
    let seen = client.until_ping();
    let answered: Vec<&Value> = seen.iter().filter(|m| is_response_to(m, id)).collect();
    assert!(
        answered.is_empty(),
        "a cancelled request was answered: {answered:?}"
    );
    // Work stopped, so nothing more may come for it: neither progress nor a late answer.
    let later = client.until_ping();
    let late: Vec<&Value> = later
        .iter()
        .filter(|m| is_response_to(m, id) || m["method"] == "notifications/progress")
        .collect();
    assert!(late.is_empty(), "messages after the work stopped: {late:?}");
}

/// The first root's `field` line of list_roots (`symbols`, `search`, `history`…).
pub fn root_line(client: &mut Client, field: &str) -> String {
    let roots = client.call("list_roots", json!({}));
    roots["structuredContent"]["roots"][0][field]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Polls the first root's `field` line until `want` holds (at most `within`); the line.
pub fn wait_root_line(
    client: &mut Client,
    field: &str,
    within: Duration,
    want: impl Fn(&str) -> bool,
) -> String {
    let deadline = Instant::now() + within;
    loop {
        let line = root_line(client, field);
        if want(&line) {
            return line;
        }
        assert!(Instant::now() < deadline, "{field}: {line}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The first root's `symbols` line of list_roots (the symbol index's state).
pub fn symbols_state(client: &mut Client) -> String {
    root_line(client, "symbols")
}

/// Polls list_roots until the first root's symbol index state starts with `prefix`.
pub fn wait_symbols(client: &mut Client, prefix: &str, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let state = symbols_state(client);
        if state.starts_with(prefix) {
            return state;
        }
        assert!(
            Instant::now() < deadline,
            "the symbol index never became {prefix}: {state}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Polls list_roots until the first root's search index state starts with `prefix`.
pub fn wait_search(client: &mut Client, prefix: &str, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let roots = client.call("list_roots", json!({}));
        let state = roots["structuredContent"]["roots"][0]["search"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if state.starts_with(prefix) {
            return state;
        }
        assert!(
            Instant::now() < deadline,
            "the search index never became {prefix}: {state}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The bytes of each form of a tool result as serialized, which the output budget bounds
/// one by one: the result without its structured content (the text, images, `isError`…),
/// and the structured content (0 without one).
pub fn forms(result: &Value) -> (usize, usize) {
    let mut text_form = result.clone();
    let structured = text_form
        .as_object_mut()
        .and_then(|result| result.remove("structuredContent"));
    let size = |value: &Value| serde_json::to_string(value).unwrap().len();
    (size(&text_form), structured.as_ref().map_or(0, size))
}

/// The larger of a tool result's two forms as serialized (see [`forms`]): what must stay
/// within the output budget.
pub fn wire_size(result: &Value) -> usize {
    let (text, structured) = forms(result);
    text.max(structured)
}

/// A path of a tool's structured result made absolute: joined to the answer's `root` when
/// it has one (paths are relative to the one root), else as it is.
pub fn absolute(result: &Value, path: &str) -> String {
    match result["structuredContent"]["root"].as_str() {
        Some(root) => Path::new(root).join(path).to_string_lossy().into_owned(),
        None => path.to_string(),
    }
}

/// The paths a structured list holds (`files` of grep and glob; the `path` of each entry
/// of other lists), made absolute.
pub fn listed_paths(result: &Value, key: &str) -> Vec<String> {
    let items = result["structuredContent"][key].as_array().cloned();
    items
        .unwrap_or_default()
        .iter()
        .map(|item| {
            let path = item.as_str().or_else(|| item["path"].as_str());
            absolute(result, path.unwrap_or_default())
        })
        .collect()
}

/// Every matching line of a grep content answer (or use of a references answer) as
/// `(absolute path, line, text)`, in line order within each file: the rows outside every
/// definition and those under each scope.
pub fn matched_lines(result: &Value) -> Vec<(String, u64, String)> {
    let structured = &result["structuredContent"];
    let files = structured["matches"]
        .as_array()
        .or_else(|| structured["files"].as_array())
        .cloned()
        .unwrap_or_default();
    let mut lines = Vec::new();
    for file in &files {
        let path = absolute(result, file["path"].as_str().unwrap_or_default());
        let mut rows: Vec<&Value> = file["matches"].as_array().into_iter().flatten().collect();
        for scope in file["scopes"].as_array().into_iter().flatten() {
            rows.extend(scope[4].as_array().into_iter().flatten());
        }
        let mut found: Vec<(String, u64, String)> = rows
            .iter()
            .map(|row| {
                let line = row[0].as_u64().unwrap_or_default();
                let text = row[1].as_str().unwrap_or_default().to_string();
                (path.clone(), line, text)
            })
            .collect();
        found.sort_by_key(|(_, line, _)| *line);
        lines.extend(found);
    }
    lines
}

/// The definitions of a `symbols` answer as objects, `{path, line, end_line, kind, name,
/// signature}`, the path absolute (the structured content has a row of values for each,
/// under its file's row).
pub fn symbols_of(result: &Value) -> Vec<Value> {
    let files = result["structuredContent"]["files"].as_array().cloned();
    let mut found = Vec::new();
    for file in files.unwrap_or_default() {
        let path = absolute(result, file[0].as_str().unwrap_or_default());
        for row in file[1].as_array().into_iter().flatten() {
            found.push(json!({
                "path": path,
                "line": row[0],
                "end_line": row[1],
                "kind": row[2],
                "name": row[3],
                "signature": row[4],
            }));
        }
    }
    found
}

/// A use of a name, as [`references_of`] lists it: absolute path, line, the enclosing
/// definition as the text names it (or None), whether the line defines the name, and why
/// the scope is unknown (or None).
pub type Use = (String, u64, Option<String>, bool, Option<String>);

/// The uses of a `references` answer, in line order within each file.
pub fn references_of(result: &Value) -> Vec<Use> {
    let files = result["structuredContent"]["files"].as_array().cloned();
    let mut uses = Vec::new();
    for file in files.unwrap_or_default() {
        let path = absolute(result, file["path"].as_str().unwrap_or_default());
        let defines: Vec<u64> = file["definitions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_u64)
            .collect();
        let unknown = file["scope_unknown"].as_str().map(str::to_string);
        let mut rows: Vec<(u64, Option<String>)> = Vec::new();
        for row in file["matches"].as_array().into_iter().flatten() {
            rows.push((row[0].as_u64().unwrap_or_default(), None));
        }
        for scope in file["scopes"].as_array().into_iter().flatten() {
            let name = scope[3].as_str().map(str::to_string);
            for row in scope[4].as_array().into_iter().flatten() {
                rows.push((row[0].as_u64().unwrap_or_default(), name.clone()));
            }
        }
        rows.sort_by_key(|(line, _)| *line);
        for (line, scope) in rows {
            let defines = defines.contains(&line);
            uses.push((path.clone(), line, scope, defines, unknown.clone()));
        }
    }
    uses
}

/// The results of a `search` answer, best first, each with its absolute `path` added (the
/// structured content lists them under their file).
pub fn search_results(result: &Value) -> Vec<Value> {
    let files = result["structuredContent"]["files"].as_array().cloned();
    let mut found = Vec::new();
    for file in files.unwrap_or_default() {
        let path = absolute(result, file["path"].as_str().unwrap_or_default());
        for hit in file["results"].as_array().into_iter().flatten() {
            let mut hit = hit.clone();
            hit["path"] = json!(path);
            found.push(hit);
        }
    }
    found
}

/// Polls list_roots until the search index of the first root is ready.
pub fn wait_search_ready(client: &mut Client) {
    let ready = |line: &str| line.starts_with("ready");
    wait_root_line(client, "search", Duration::from_secs(60), ready);
}

/// Calls a tool and checks that the server sent the client no `method` request (a question)
/// before its answer, nor up to a later ping's answer. Returns the tool result.
pub fn call_without_asking(
    client: &mut Client,
    tool: &str,
    arguments: Value,
    method: &str,
) -> Value {
    let id = client.start("tools/call", json!({"name": tool, "arguments": arguments}));
    let (mut seen, answer) = client.read_until_response(id, WAIT);
    seen.extend(client.until_ping());
    let asked: Vec<&Value> = seen.iter().filter(|m| m["method"] == method).collect();
    assert!(
        asked.is_empty(),
        "the client was asked ({method}): {asked:?}"
    );
    answer["result"].clone()
}
