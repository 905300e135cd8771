//! Completion against real directories and the file index (Unix).

use super::*;
use crate::watch::{RootStatus, WatchEvent};
use std::fs;
use std::time::Duration;

fn root() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("rootgrep-complete")
        .tempdir()
        .unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

fn indexed(root: &Path) -> FileIndex {
    let index = FileIndex::new();
    index.set_roots(&[root.to_path_buf()]);
    index.apply(&WatchEvent::Status(
        root.to_path_buf(),
        RootStatus::Watching,
    ));
    assert!(index.wait_fresh(root, Duration::from_secs(5)).is_some());
    index
}

/// Both ways (disk listing and index) must give the same answer.
fn both(roots: &[PathBuf], index: &FileIndex, value: &str) -> Completion {
    let listed = complete(roots, value);
    let from_index = complete_with(roots, value, Some(index));
    assert_eq!(listed, from_index, "disk and index disagree for {value:?}");
    listed
}

/// A root's value in the template form, without the trailing slash.
fn base_of(root: &Path) -> String {
    as_value(root, false, Form::Uri).unwrap()
}

#[test]
fn roots_then_ranked_children() {
    let (_tmp, root) = root();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::create_dir_all(root.join("Scripts")).unwrap();
    fs::write(root.join("setup.py"), "").unwrap();
    fs::write(root.join("lists.txt"), "").unwrap();
    fs::write(root.join(".env"), "").unwrap();
    let roots = vec![root.clone()];
    let index = indexed(&root);
    let base = base_of(&root);
    assert_eq!(both(&roots, &index, "").values, [format!("{base}/")]);
    assert_eq!(
        both(&roots, &index, &format!("{base}/s")).values,
        [
            format!("{base}/setup.py"),
            format!("{base}/src/"),
            format!("{base}/Scripts/"),
            format!("{base}/lists.txt"),
        ]
    );
    assert!(
        both(&roots, &index, &format!("{base}/"))
            .values
            .iter()
            .all(|v| !v.contains(".env"))
    );
    assert_eq!(
        both(&roots, &index, &format!("{base}/.e")).values,
        [format!("{base}/.env")],
        "a leading dot shows hidden entries"
    );
}

#[test]
fn never_offers_anything_outside_the_roots() {
    let (_tmp, root) = root();
    let (_other_tmp, outside) = self::root();
    fs::write(outside.join("secret"), "").unwrap();
    fs::create_dir_all(root.join("in")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("in/out")).unwrap();
    let roots = vec![root.clone()];
    let index = indexed(&root);
    assert!(both(&roots, &index, "etc/pa").values.is_empty());
    let parent = base_of(root.parent().unwrap());
    let above = both(&roots, &index, &format!("{parent}/"));
    assert_eq!(above.values, [format!("{}/", base_of(&root))]);
    let base = base_of(&root);
    assert!(
        both(&roots, &index, &format!("{base}/in/out/"))
            .values
            .is_empty()
    );
    assert!(
        both(&roots, &index, &format!("{base}/in/../../"))
            .values
            .is_empty()
    );
    assert!(
        both(&roots, &index, &format!("{base}/in/"))
            .values
            .is_empty(),
        "symlinks are not offered"
    );
}

#[test]
fn gitignored_entries_are_not_offered() {
    let (_tmp, root) = root();
    fs::create_dir_all(root.join(".git")).unwrap();
    fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
    fs::create_dir_all(root.join("target")).unwrap();
    fs::create_dir_all(root.join("tests")).unwrap();
    fs::write(root.join("t.log"), "").unwrap();
    fs::write(root.join("todo.md"), "").unwrap();
    let roots = vec![root.clone()];
    let index = indexed(&root);
    let base = base_of(&root);
    assert_eq!(
        both(&roots, &index, &format!("{base}/t")).values,
        [format!("{base}/tests/"), format!("{base}/todo.md")]
    );
}

#[test]
fn caps_at_one_hundred_with_total_and_has_more() {
    let (_tmp, root) = root();
    for i in 0..150 {
        fs::write(root.join(format!("f{i:03}")), "").unwrap();
    }
    let roots = vec![root.clone()];
    let index = indexed(&root);
    let got = both(&roots, &index, &format!("{}/f", base_of(&root)));
    assert_eq!(got.values.len(), 100);
    assert_eq!(got.values[0], format!("{}/f000", base_of(&root)));
    assert_eq!(got.values[99], format!("{}/f099", base_of(&root)));
    assert_eq!(got.total, 150);
    assert!(got.has_more);
}

#[test]
fn values_resolve_back_to_the_exact_bytes() {
    use std::os::unix::ffi::OsStringExt;
    let (_tmp, root) = root();
    let names: Vec<std::ffi::OsString> = vec![
        "设计.md".into(),
        "caf\u{e9}".into(),
        "cafe\u{301}".into(),
        " lead".into(),
        "trail ".into(),
        "new\nline".into(),
        "50%off".into(),
        "%2e".into(),
        "q?#".into(),
        std::ffi::OsString::from_vec(b"bad\xffname".to_vec()),
    ];
    for name in &names {
        fs::write(root.join(name), "").unwrap();
    }
    let roots = vec![root.clone()];
    let base = base_of(&root);
    let got = complete(&roots, &format!("{base}/"));
    assert_eq!(got.total, names.len());
    for value in &got.values {
        let path = crate::roots::path_from_file_uri(&format!("file:///{value}")).unwrap();
        assert!(
            names.iter().any(|n| root.join(n) == path),
            "{value} resolves to {path:?}, not a listed name"
        );
    }
    // Typing a value back narrows to that very entry.
    let nfd = got
        .values
        .iter()
        .find(|v| v.ends_with("cafe%CC%81"))
        .unwrap();
    assert_eq!(complete(&roots, nfd).values, std::slice::from_ref(nfd));
    let bad = got.values.iter().find(|v| v.contains("%FF")).unwrap();
    assert_eq!(complete(&roots, bad).values, std::slice::from_ref(bad));
    // Plain values (prompt arguments) skip the name that is not UTF-8.
    let plain = complete_in(
        &roots,
        root.to_str().unwrap().trim_start_matches('/'),
        Form::Plain,
        None,
    );
    assert_eq!(plain.values.len(), 1, "{:?}", plain.values);
    let plain = complete_in(
        &roots,
        &format!("{}/", root.to_str().unwrap().trim_start_matches('/')),
        Form::Plain,
        None,
    );
    assert_eq!(plain.total, names.len() - 1);
    assert!(plain.values.iter().any(|v| v.ends_with("/设计.md")));
}
