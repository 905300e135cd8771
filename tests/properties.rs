//! Property tests for the workspace boundary: path resolution and containment, `file://`
//! URIs, and tool-argument decoding. Each property is what a user relies on: a path the
//! server calls "inside" is really inside (whatever `..`, `.`, `//`, symlinks or percent
//! escapes it uses), URIs round-trip exactly, and no argument payload can panic the server.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use rootgrep::roots::{Root, RootSet, RootSource, file_uri_from_path, path_from_file_uri, resolve};

struct Fixture {
    _tmp: tempfile::TempDir,
    app: PathBuf,
    roots: RootSet,
}

/// app/{src/lib.rs, sub/deep/, in-link -> sub, out-link -> ../outside, file-out -> ../outside/secret}
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
    let roots = RootSet::new(vec![Root::new(app.clone(), None)], RootSource::CommandLine);
    Fixture {
        _tmp: tmp,
        app,
        roots,
    }
}

fn segment() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "..", ".", "", "src", "lib.rs", "sub", "deep", "in-link", "out-link", "file-out",
        "sibling", "secret", "nested", "outside", "app", "app2", "missing",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    /// Whatever the path, "inside" is only ever said of a path that the OS resolves to a
    /// place inside the root.
    #[test]
    fn resolution_never_calls_an_outside_path_inside(
        segments in prop::collection::vec(segment(), 1..8),
        absolute in any::<bool>(),
        as_uri in any::<bool>(),
    ) {
        let fx = fixture();
        let relative = segments.join("/");
        let arg = if as_uri {
            format!("{}/{}", file_uri_from_path(&fx.app), relative)
        } else if absolute {
            format!("{}/{}", fx.app.display(), relative)
        } else {
            relative.clone()
        };
        let Ok(resolved) = resolve(&arg, &fx.roots) else {
            return Ok(()); // refused with an error: safe
        };
        if resolved.root.is_some() {
            prop_assert!(resolved.path.starts_with(&fx.app), "{arg} -> {:?}", resolved.path);
            // What the OS says about the same path agrees.
            let joined = if absolute || as_uri { PathBuf::from(format!("{}/{}", fx.app.display(), relative)) } else { fx.app.join(&relative) };
            if let Ok(real) = std::fs::canonicalize(&joined) {
                prop_assert!(real.starts_with(&fx.app), "{arg}: OS says {real:?}");
                prop_assert_eq!(&real, &resolved.path);
            }
        }
        // A path the OS resolves outside is never called inside.
        let joined = if absolute || as_uri { PathBuf::from(format!("{}/{}", fx.app.display(), relative)) } else { fx.app.join(&relative) };
        if let Ok(real) = std::fs::canonicalize(&joined)
            && !real.starts_with(&fx.app)
        {
            prop_assert!(resolved.root.is_none(), "{arg}: outside {real:?} called inside");
        }
    }

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
