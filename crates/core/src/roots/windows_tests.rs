//! Unit tests of `roots` on Windows: drive letters, UNC shares and NTFS names.

use super::*;
use std::path::{Path, PathBuf};

#[test]
fn drive_letter_and_unc_uris() {
    assert_eq!(
        path_from_file_uri("file:///C:/work/a%20b.rs").unwrap(),
        PathBuf::from(r"C:\work\a b.rs")
    );
    assert_eq!(
        path_from_file_uri("file:///c%3A/x").unwrap(),
        PathBuf::from(r"c:\x")
    );
    assert_eq!(
        path_from_file_uri("file://server/share/x").unwrap(),
        PathBuf::from(r"\\server\share\x")
    );
    assert_eq!(
        path_from_file_uri("file:///usr/lib"),
        Err(UriError::NotAbsolute)
    );
    assert_eq!(
        file_uri_from_path(Path::new(r"\\?\C:\work\a b.rs")),
        "file:///C:/work/a%20b.rs"
    );
    assert_eq!(
        file_uri_from_path(Path::new(r"\\?\UNC\server\share\x")),
        "file://server/share/x"
    );
}

#[test]
fn canonical_paths_are_kept_and_shown_in_their_ordinary_form() {
    let tmp = tempfile::tempdir().unwrap();
    let canonical = canonicalize(tmp.path()).unwrap();
    let text = canonical.to_str().unwrap();
    assert!(crate::platform::winpath::has_drive(text), "{text}");
    let root = Root::new(tmp.path().to_path_buf(), None);
    assert_eq!(root.effective(), canonical.as_path());
    assert_eq!(path_text(Path::new(r"\\?\C:\work\x")), r"C:\work\x");
    assert_eq!(path_text(Path::new(r"\\?\C:\work\x.")), r"\\?\C:\work\x.");
    std::fs::write(canonical.join("f.rs"), "x").unwrap();
    let set = RootSet::new(vec![root], RootSource::CommandLine);
    let resolved = resolve("f.rs", &set).unwrap();
    assert_eq!(resolved.path, canonical.join("f.rs"));
    assert_eq!(resolved.root, Some(0));
    // A name only the verbatim form can spell keeps that form, where the system reports
    // such a name at all (Wine creates `odd.` but reports its final path as `odd`; the
    // rule itself is `winpath::exact_plain`, tested on every platform).
    let odd = format!(r"\\?\{text}\odd.");
    if std::fs::write(&odd, "x").is_ok()
        && std::fs::canonicalize(&odd).is_ok_and(|real| real.to_string_lossy().ends_with("odd."))
    {
        let kept = canonicalize(Path::new(&odd)).unwrap();
        assert!(kept.to_str().unwrap().starts_with(r"\\?\"), "{kept:?}");
    }
}

#[test]
fn containment_ignores_case_and_verbatim_prefixes() {
    let tmp = tempfile::tempdir().unwrap();
    let canonical = std::fs::canonicalize(tmp.path()).unwrap();
    assert!(
        canonical.to_str().unwrap().starts_with(r"\\?\"),
        "{canonical:?}"
    );
    let root = Root::new(tmp.path().to_path_buf(), None);
    let upper = PathBuf::from(canonical.to_str().unwrap().to_uppercase()).join("x");
    assert!(root.contains(&upper));
    let plain = PathBuf::from(canonical.to_str().unwrap().trim_start_matches(r"\\?\"));
    assert!(root.contains(&plain.join("y")));
    let sibling = PathBuf::from(format!("{}2", canonical.display()));
    assert!(!root.contains(&sibling));
    let set = RootSet::new(vec![root], RootSource::CommandLine);
    let mixed = format!("{}/sub\\f.rs", plain.display());
    let resolved = resolve(&mixed, &set).unwrap();
    assert_eq!(resolved.root, Some(0), "{resolved:?}");
}
