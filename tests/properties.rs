//! Property tests for the workspace boundary: path resolution and containment, `file://`
//! URIs, and tool-argument decoding. Each property is what a user relies on: a path the
//! server calls "inside" is really inside (whatever `..`, `.`, `//`, symlinks or percent
//! escapes it uses), URIs round-trip exactly, and no argument payload can panic the server.

// Unix paths and bytes throughout; Windows path handling is tested in src/files/winpath.rs
// and tests/it/windows.rs.
#![cfg(unix)]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use rootgrep_core::roots::{
    Root, RootSet, RootSource, file_uri_from_path, path_from_file_uri, resolve,
};

struct Fixture {
    _tmp: tempfile::TempDir,
    app: PathBuf,
    roots: RootSet,
}

/// app/{src/lib.rs, sub/deep/, in-link -> sub, out-link -> ../outside, file-out ->
/// ../outside/secret, sibling -> ../app2, new-out -> ../outside/new (dangling: the
/// write-target case), new-in -> sub/new (dangling, pointing inside)};
/// outside/{secret, nested/}; app2/ (a sibling whose name extends "app").
fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let app = base.join("app");
    for dir in ["app/src", "app/sub/deep", "outside/nested", "app2"] {
        std::fs::create_dir_all(base.join(dir)).unwrap();
    }
    std::fs::write(app.join("src/lib.rs"), "x").unwrap();
    std::fs::write(base.join("outside/secret"), "x").unwrap();
    std::fs::write(base.join("app2/secret"), "x").unwrap();
    std::os::unix::fs::symlink(app.join("sub"), app.join("in-link")).unwrap();
    std::os::unix::fs::symlink("../outside", app.join("out-link")).unwrap();
    std::os::unix::fs::symlink("../outside/secret", app.join("file-out")).unwrap();
    std::os::unix::fs::symlink("../app2", app.join("sibling")).unwrap();
    std::os::unix::fs::symlink("../outside/new", app.join("new-out")).unwrap();
    std::os::unix::fs::symlink("sub/new", app.join("new-in")).unwrap();
    let roots = RootSet::new(vec![Root::new(app.clone(), None)], RootSource::CommandLine);
    Fixture {
        _tmp: tmp,
        app,
        roots,
    }
}

/// Path segments, including percent escapes: in a `file://` URI they decode (`%2e%2e` is
/// `..`, `%2F` a separator); in a plain path they are literal names.
fn segment() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "..",
        ".",
        "",
        "src",
        "lib.rs",
        "sub",
        "deep",
        "in-link",
        "out-link",
        "file-out",
        "sibling",
        "secret",
        "nested",
        "outside",
        "app",
        "app2",
        "missing",
        "new-out",
        "new-in",
        "%2e%2e",
        "%2E%2e",
        "..%2F..",
        "%2e",
        "%2F",
        "sub%2Fdeep",
        "..%2Foutside",
        "%25",
        "new%20file",
    ])
}

/// `%XX` escapes decoded to bytes (what a `file://` URI's path means).
fn percent_decoded(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(byte) = u8::from_str_radix(&text[i + 1..i + 3], 16)
        {
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// The oracle: what the OS makes of `path` (bytes, relative to the directory `cur`),
/// following every symlink as the kernel would; for a path that does not exist, the
/// canonical nearest existing ancestor joined with the missing rest (a dangling symlink
/// is followed to where it points). `None` where the OS itself has no answer: a component
/// under a file (including a trailing `/` or `/.` after one), `..` after a missing
/// component, or a symlink loop.
fn oracle(cur: &Path, path: &[u8]) -> Option<PathBuf> {
    let mut depth = 0;
    let (existing, missing) = walk(cur.to_path_buf(), path, &mut depth)?;
    let mut out = existing;
    for name in missing {
        out.push(OsStr::from_bytes(&name));
    }
    Some(out)
}

/// One step of [`oracle`]: (canonical existing prefix, missing components after it).
fn walk(mut cur: PathBuf, path: &[u8], depth: &mut u32) -> Option<(PathBuf, Vec<Vec<u8>>)> {
    if path.first() == Some(&b'/') {
        cur = PathBuf::from("/");
    }
    let mut missing: Vec<Vec<u8>> = Vec::new();
    // Right after a dangling symlink: a following "/" or "/." asks the kernel to look the
    // link's target up as a directory, which fails (ENOENT): no answer.
    let mut after_dangling = false;
    for name in path.split(|b| *b == b'/') {
        if !missing.is_empty() {
            match name {
                b"" | b"." if after_dangling => return None,
                b"" | b"." => {}
                b".." => return None,
                _ => {
                    after_dangling = false;
                    missing.push(name.to_vec());
                }
            }
            continue;
        }
        // An existing prefix must be a directory for anything (even "" or ".") to follow.
        if !cur.is_dir() {
            return None;
        }
        match name {
            b"" | b"." => continue,
            b".." => {
                cur = cur.parent().map(Path::to_path_buf).unwrap_or(cur);
                continue;
            }
            _ => {}
        }
        let next = cur.join(OsStr::from_bytes(name));
        match std::fs::symlink_metadata(&next) {
            Err(_) => missing.push(name.to_vec()),
            Ok(meta) if meta.file_type().is_symlink() => {
                *depth += 1;
                if *depth > 40 {
                    return None;
                }
                let target = std::fs::read_link(&next).ok()?;
                let (prefix, tail) = walk(cur.clone(), target.as_os_str().as_bytes(), depth)?;
                cur = prefix;
                after_dangling = !tail.is_empty();
                missing = tail;
            }
            Ok(_) => cur = next,
        }
    }
    Some((cur, missing))
}

/// Both directions against the oracle. Whatever the path (`..`, `.`, `//`, symlinks,
/// dangling symlinks, percent escapes), "inside" is only said of a path the OS puts
/// inside the root, and of the same canonical path; and a path the OS puts inside is
/// resolved inside (so a resolver refusing everything cannot pass). One fixture for all
/// cases (resolution only reads it).
#[test]
fn resolution_agrees_with_the_os_in_both_directions() {
    let fx = fixture();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 3000,
        ..ProptestConfig::default()
    });
    let said_inside = std::cell::Cell::new(0u32);
    let said_outside = std::cell::Cell::new(0u32);
    let strategy = (
        prop::collection::vec(segment(), 1..8),
        any::<bool>(),
        any::<bool>(),
    );
    runner
        .run(&strategy, |(segments, absolute, as_uri)| {
            let relative = segments.join("/");
            let arg = if as_uri {
                format!("{}/{}", file_uri_from_path(&fx.app), relative)
            } else if absolute {
                format!("{}/{}", fx.app.display(), relative)
            } else {
                relative.clone()
            };
            // What the OS makes of it: escapes are decoded only in a URI; a relative path
            // that starts with '/' (a first empty segment) is absolute.
            let tail = if as_uri {
                percent_decoded(&relative)
            } else {
                relative.as_bytes().to_vec()
            };
            let bytes = if as_uri || absolute {
                let mut full = fx.app.as_os_str().as_bytes().to_vec();
                full.push(b'/');
                full.extend(tail);
                full
            } else {
                tail
            };
            // An empty path names nothing (refusing it is right).
            let expected = if bytes.is_empty() {
                None
            } else {
                oracle(&fx.app, &bytes)
            };
            let inside = expected.as_ref().map(|p| p.starts_with(&fx.app));
            match resolve(&arg, &fx.roots) {
                Ok(resolved) if resolved.root.is_some() => {
                    prop_assert!(
                        resolved.path.starts_with(&fx.app),
                        "{arg} -> {:?}",
                        resolved.path
                    );
                    if let Some(expected) = &expected {
                        prop_assert!(
                            inside == Some(true),
                            "{arg}: called inside, the OS says {expected:?}"
                        );
                        prop_assert_eq!(&resolved.path, expected, "{}", arg);
                    }
                }
                // Refused, or resolved outside: wrong only if the OS puts it inside.
                outcome => {
                    prop_assert!(
                        inside != Some(true),
                        "{arg}: the OS says {expected:?} (inside), the resolver {outcome:?}"
                    );
                }
            }
            match inside {
                Some(true) => said_inside.set(said_inside.get() + 1),
                Some(false) => said_outside.set(said_outside.get() + 1),
                None => {}
            }
            Ok(())
        })
        .unwrap();
    // Both sides were exercised.
    let (inside, outside) = (said_inside.get(), said_outside.get());
    assert!(
        inside > 100 && outside > 100,
        "{inside} inside, {outside} outside"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    /// `file://` URIs round-trip every byte path (non-UTF-8, spaces, '%', '#', '?').
    #[test]
    fn file_uris_round_trip(bytes in prop::collection::vec(1u8..=255, 1..64)) {
        let mut raw = vec![b'/'];
        raw.extend(bytes.iter().copied());
        let path = Path::new(OsStr::from_bytes(&raw));
        let uri = file_uri_from_path(path);
        prop_assert!(uri.is_ascii());
        prop_assert_eq!(path_from_file_uri(&uri).unwrap(), path.to_path_buf());
    }

    /// Arbitrary (even hostile) URIs never panic the parser, and a decoded path never holds
    /// a NUL byte.
    #[test]
    fn uri_parsing_is_total(text in "\\PC{0,80}") {
        for candidate in [text.clone(), format!("file://{text}"), format!("file:///{text}")] {
            if let Ok(path) = path_from_file_uri(&candidate) {
                prop_assert!(!path.as_os_str().as_bytes().contains(&0));
                prop_assert!(path.is_absolute());
            }
        }
    }
}

/// Tool-argument decoding: arbitrary JSON sent as the arguments of every tool never panics
/// the server; each call is answered (a result or a tool error).
#[test]
fn arbitrary_arguments_are_always_answered() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let fx = fixture();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rootgrep"))
        .arg("--read-only")
        .current_dir(&fx.app)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = std::cell::RefCell::new(child.stdin.take().unwrap());
    let stdout = std::cell::RefCell::new(BufReader::new(child.stdout.take().unwrap()));
    writeln!(stdin.borrow_mut(), r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"p","version":"1"}}}}}}"#).unwrap();
    writeln!(
        stdin.borrow_mut(),
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let mut line = String::new();
    stdout.borrow_mut().read_line(&mut line).unwrap();
    let values = [
        serde_json::json!(null),
        serde_json::json!(-1),
        serde_json::json!(1e308),
        serde_json::json!("x"),
        serde_json::json!([]),
        serde_json::json!({}),
        serde_json::json!({"a": [1, {"b": null}]}),
        serde_json::json!("../../../../etc/passwd"),
        serde_json::json!("\u{0}"),
        serde_json::json!(u64::MAX),
    ];
    let tools = [
        "grep",
        "glob",
        "read_file",
        "read_files",
        "file_info",
        "list_directory",
        "directory_tree",
        "list_roots",
    ];
    let keys = [
        "pattern",
        "path",
        "paths",
        "limit",
        "offset",
        "head_limit",
        "glob",
        "type",
        "-C",
        "max_filesize",
        "output_mode",
    ];
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 300,
        ..ProptestConfig::default()
    });
    let id = std::cell::Cell::new(0u64);
    runner
        .run(
            &(0..tools.len(), prop::collection::vec((0..keys.len(), 0..values.len()), 0..4)),
            |(tool, pairs)| {
                id.set(id.get() + 1);
                let id = id.get();
                let mut args = serde_json::Map::new();
                for (k, v) in pairs {
                    args.insert(keys[k].to_string(), values[v].clone());
                }
                let request = serde_json::json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tools[tool],"arguments":args}});
                writeln!(stdin.borrow_mut(), "{request}").unwrap();
                let mut line = String::new();
                loop {
                    line.clear();
                    prop_assert!(stdout.borrow_mut().read_line(&mut line).unwrap() > 0, "server died");
                    let value: serde_json::Value = serde_json::from_str(&line).unwrap();
                    if value["id"] == serde_json::json!(id) {
                        prop_assert!(value.get("result").is_some(), "{request} -> {value}");
                        break;
                    }
                }
                Ok(())
            },
        )
        .unwrap();
    drop(stdin.into_inner());
    let _ = child.wait();
}
