//! Unit tests of `roots` on Unix: containment, URIs, resolution and the choice of roots.

use super::*;
use crate::platform::os::OsStringExt;
use std::ffi::OsString;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

fn set(dirs: &[&Path]) -> RootSet {
    RootSet::new(
        dirs.iter()
            .map(|d| Root::new(d.to_path_buf(), None))
            .collect(),
        RootSource::CommandLine,
    )
}

#[test]
fn file_uris_decode_percent_and_accept_localhost() {
    assert_eq!(
        path_from_file_uri("file:///tmp/a%20b/c").unwrap(),
        PathBuf::from("/tmp/a b/c")
    );
    assert_eq!(
        path_from_file_uri("file://localhost/tmp/x").unwrap(),
        PathBuf::from("/tmp/x")
    );
    assert_eq!(
        path_from_file_uri("FILE:///tmp/x").unwrap(),
        PathBuf::from("/tmp/x")
    );
    assert!(matches!(
        path_from_file_uri("file://server/share"),
        Err(UriError::RemoteHost(_))
    ));
    assert_eq!(
        path_from_file_uri("https://x/y"),
        Err(UriError::NotFileScheme)
    );
    assert_eq!(path_from_file_uri("file:///a%00b"), Err(UriError::Nul));
    // Non-UTF-8 bytes survive.
    let p = path_from_file_uri("file:///tmp/%FF").unwrap();
    assert_eq!(p.as_os_str().len(), 6);
}

#[test]
fn uri_round_trip() {
    let path = PathBuf::from("/tmp/a b/ü#?%.rs");
    assert_eq!(
        path_from_file_uri(&file_uri_from_path(&path)).unwrap(),
        path
    );
}

#[test]
fn sibling_prefix_is_not_inside() {
    let tmp = tempfile::tempdir().unwrap();
    let app = tmp.path().join("app");
    let app2 = tmp.path().join("app2");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::create_dir_all(&app2).unwrap();
    std::fs::write(app2.join("secret"), "x").unwrap();
    let roots = set(&[&app]);
    let resolved = resolve(app2.join("secret").to_str().unwrap(), &roots).unwrap();
    assert_eq!(resolved.root, None);
}

#[test]
fn dotdot_and_symlinks_are_resolved_before_containment() {
    let tmp = tempfile::tempdir().unwrap();
    let app = tmp.path().join("app");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret"), "x").unwrap();
    symlink(&outside, app.join("link")).unwrap();
    let roots = set(&[&app]);
    assert_eq!(resolve("../outside/secret", &roots).unwrap().root, None);
    assert_eq!(resolve("link/secret", &roots).unwrap().root, None);
    // A not-yet-existing file under the symlinked directory is outside too.
    let new = resolve("link/new.txt", &roots).unwrap();
    assert!(!new.exists);
    assert_eq!(new.root, None);
    // A dangling symlink inside the root pointing outside is judged by its target.
    symlink(outside.join("nope"), app.join("dangling")).unwrap();
    assert_eq!(resolve("dangling", &roots).unwrap().root, None);
}

#[test]
fn relative_paths_try_each_root_then_the_first() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    std::fs::write(b.join("only_in_b"), "x").unwrap();
    let roots = set(&[&a, &b]);
    let found = resolve("only_in_b", &roots).unwrap();
    assert_eq!(found.root, Some(1));
    assert!(found.exists);
    let new = resolve("sub/new.txt", &roots).unwrap();
    assert_eq!(new.root, Some(0));
    assert_eq!(
        new.path,
        std::fs::canonicalize(&a).unwrap().join("sub/new.txt")
    );
    assert!(matches!(
        resolve("x/../../y", &roots),
        Err(PathError::Found(Found {
            fault: Fault::DotDotAfterMissing,
            ..
        }))
    ));
}

#[test]
fn file_uri_with_encoded_dotdot_cannot_escape() {
    let tmp = tempfile::tempdir().unwrap();
    let app = tmp.path().join("app");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(tmp.path().join("secret"), "x").unwrap();
    let roots = set(&[&app]);
    let uri = format!(
        "{}/%2e%2e/secret",
        file_uri_from_path(&std::fs::canonicalize(&app).unwrap())
    );
    let resolved = resolve(&uri, &roots).unwrap();
    assert_eq!(resolved.root, None);
    assert!(resolved.path.ends_with("secret"));
}

#[test]
fn sources_in_order_and_confine_filtering() {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let (a, b) = (base.join("a"), base.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let none = Confine::default();
    let (set, _) = choose_roots(
        Some(vec![Root::new(a.clone(), None)]),
        std::slice::from_ref(&b),
        &base,
        &none,
    );
    assert_eq!(set.source, RootSource::Client);
    let (set, _) = choose_roots(Some(vec![]), std::slice::from_ref(&b), &base, &none);
    assert_eq!(set.source, RootSource::CommandLine);
    // An empty list from the client: no access, never the working directory.
    let (set, _) = choose_roots(Some(vec![]), &[], &base, &none);
    assert_eq!(set.source, RootSource::Client);
    assert!(set.roots.is_empty());
    let (set, _) = choose_roots(None, &[], &base, &none);
    assert_eq!(set.source, RootSource::WorkingDirectory);
    let confine = Confine::new(std::slice::from_ref(&b)).unwrap();
    let (set, warnings) =
        choose_roots(Some(vec![Root::new(a.clone(), None)]), &[], &base, &confine);
    assert_eq!(set.source, RootSource::Confine);
    assert_eq!(set.roots[0].canonical.as_deref(), Some(b.as_path()));
    assert_eq!(
        warnings.len(),
        1,
        "the client's root only: the working directory is not tried"
    );
}

#[test]
fn confine_is_component_wise() {
    let tmp = tempfile::tempdir().unwrap();
    let app = tmp.path().join("app");
    std::fs::create_dir_all(&app).unwrap();
    let confine = Confine::new(std::slice::from_ref(&app)).unwrap();
    let canonical = std::fs::canonicalize(&app).unwrap();
    assert!(confine.allows(&canonical.join("x")));
    let mut sibling = canonical.clone().into_os_string();
    sibling.push("2");
    assert!(!confine.allows(Path::new(&sibling)));
    assert!(Confine::new(&[tmp.path().join("missing")]).is_err());
}

#[test]
fn identity_containment_sees_the_directory_not_its_spelling() {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let (app, app2) = (base.join("app"), base.join("app2"));
    std::fs::create_dir_all(app.join("src")).unwrap();
    std::fs::create_dir_all(&app2).unwrap();
    assert!(within_by_identity(&app, &app));
    assert!(within_by_identity(&app.join("src"), &app));
    assert!(within_by_identity(&app.join("src/new/deeper.rs"), &app));
    // `.` is another spelling of the same directory: the same identity.
    assert!(within_by_identity(
        &app.join(".").join("x"),
        &app.join("src/..")
    ));
    assert!(!within_by_identity(&app2.join("x"), &app));
    assert!(!within_by_identity(&base, &app));
    assert!(!within_by_identity(&app.join("x"), &base.join("missing")));
    // A symlink to the root is an entry of its own: not the root (links are never
    // followed here; canonical paths have none).
    symlink(&app, base.join("alias")).unwrap();
    assert!(!within_by_identity(&base.join("alias/src"), &app));
}

#[test]
fn multibyte_characters_near_the_scheme_length_do_not_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let app = tmp.path().join("app");
    std::fs::create_dir_all(app.join("docs")).unwrap();
    std::fs::write(app.join("docs/设计.md"), "x").unwrap();
    let roots = set(&[&app]);
    let found = resolve("docs/设计.md", &roots).unwrap();
    assert!(found.exists);
    for arg in ["éééé", "fileé", "file:/é", "file:é/", "ﬁle://x"] {
        let _ = resolve(arg, &roots);
    }
}

#[test]
fn paths_are_taken_exactly_as_given() {
    let tmp = tempfile::tempdir().unwrap();
    let app = std::fs::canonicalize(tmp.path()).unwrap();
    std::fs::write(app.join("notes.txt"), "x").unwrap();
    let roots = set(&[&app]);
    // A trailing or leading space is part of the name, not trimmed away.
    let spaced = resolve("notes.txt ", &roots).unwrap();
    assert_eq!(spaced.path, app.join("notes.txt "));
    assert!(!spaced.exists);
    assert_eq!(
        resolve(" notes.txt", &roots).unwrap().path,
        app.join(" notes.txt")
    );
    // `%2e` is three characters of a name outside URIs.
    assert_eq!(resolve("%2e%2e", &roots).unwrap().path, app.join("%2e%2e"));
    // NFC and NFD spellings name different files.
    let nfc = resolve("caf\u{e9}", &roots).unwrap().path;
    let nfd = resolve("cafe\u{301}", &roots).unwrap().path;
    assert_ne!(nfc, nfd);
    // A trailing slash names a directory: refused on a file, kept as a flag otherwise.
    assert!(matches!(
        resolve("notes.txt/", &roots),
        Err(PathError::Found(Found {
            fault: Fault::NotADirectory,
            ..
        }))
    ));
    let missing = resolve("sub/", &roots).unwrap();
    assert!(missing.dir_only && !missing.exists);
    assert_eq!(missing.path, app.join("sub"));
    std::fs::create_dir(app.join("d")).unwrap();
    let dir = resolve("d/", &roots).unwrap();
    assert!(dir.dir_only && dir.exists);
    assert!(!resolve("notes.txt", &roots).unwrap().dir_only);
    assert!(resolve_entry("notes.txt/", &roots).is_err());
}

#[test]
fn over_long_paths_are_refused_up_front() {
    let tmp = tempfile::tempdir().unwrap();
    let roots = set(&[tmp.path()]);
    let long_name = "n".repeat(NAME_MAX + 1);
    let err = resolve(&long_name, &roots).unwrap_err();
    assert!(
        matches!(
            err,
            PathError::TooLong {
                component: Some(_),
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("NAME_MAX"), "{err}");
    // A name of exactly NAME_MAX bytes is fine.
    assert!(resolve(&"n".repeat(NAME_MAX), &roots).is_ok());
    let deep = "d/".repeat(PATH_MAX);
    let err = resolve(&deep, &roots).unwrap_err();
    assert!(
        matches!(
            err,
            PathError::TooLong {
                component: None,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("PATH_MAX"), "{err}");
    let huge = format!("/{}", "x/".repeat(1_000_000));
    assert!(matches!(
        resolve(&huge, &roots),
        Err(PathError::TooLong { .. })
    ));
    let uri = format!("file:///{}", "%41".repeat(300));
    assert!(matches!(
        resolve(&uri, &roots),
        Err(PathError::TooLong { .. })
    ));
    assert!(matches!(resolve("a\0b", &roots), Err(PathError::Nul)));
}

#[test]
fn path_text_keeps_bytes_that_are_not_utf8() {
    let plain = Path::new("/tmp/a b/设计.md");
    assert_eq!(path_text(plain), "/tmp/a b/设计.md");
    let raw = PathBuf::from(OsString::from_vec(b"/tmp/bad\xff name".to_vec()));
    let text = path_text(&raw);
    assert_eq!(path_from_file_uri(&text).unwrap(), raw);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

    /// Whatever the argument, resolving answers (a path or an error) without panicking,
    /// and a relative path is joined byte for byte: nothing trimmed or normalised.
    #[test]
    fn resolve_never_panics_and_keeps_names(arg in "\\PC{0,40}") {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let roots = set(&[&base]);
        if let Ok(resolved) = resolve(&arg, &roots) {
            let plain = !arg.starts_with('/')
                && !arg.starts_with("~/")
                && !arg.to_ascii_lowercase().starts_with("file://")
                && !arg.split('/').any(|c| c == "." || c == "..")
                && !arg.contains("//")
                && !arg.ends_with('/');
            if plain {
                proptest::prop_assert_eq!(resolved.path, base.join(&arg));
            }
        }
    }
}

#[test]
fn describe_is_bounded_however_many_roots() {
    let roots: Vec<Root> = (0..5000)
        .map(|i| Root {
            path: PathBuf::from(format!("/nonexistent/{}/{i}", "r".repeat(200))),
            canonical: None,
            name: None,
            is_file: false,
        })
        .collect();
    let described = RootSet::new(roots, RootSource::Client).describe();
    let text = described.to_string();
    assert!(text.len() < 2 * DESCRIBE_MAX_BYTES, "{} bytes", text.len());
    assert_eq!(described.more, 4995);
    assert!(text.ends_with(" and 4995 more"), "{text}");
    let one = RootSet::new(
        vec![Root {
            path: PathBuf::from("/a"),
            canonical: None,
            name: None,
            is_file: false,
        }],
        RootSource::Client,
    );
    assert_eq!(one.describe().to_string(), "/a");
}
