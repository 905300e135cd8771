//! Windows value text, checked on every platform.

use super::Form::{Plain, Uri};
use super::win::*;

#[test]
fn typed_values_split_at_either_separator() {
    assert_eq!(split(r"C:\Us"), Some((r"C:\", "Us")));
    assert_eq!(split("c:/users/"), Some(("c:/users/", "")));
    assert_eq!(split(r"C:\Users/me\pr"), Some((r"C:\Users/me\", "pr")));
    assert_eq!(split("C:"), None);
    assert_eq!(typed("C:/Program%20Files/", Uri), "C:/Program Files/");
    assert_eq!(typed("/C:/x", Uri), "C:/x");
    assert_eq!(typed("/srv/share/", Uri), "//srv/share/");
    assert_eq!(typed(r"C:\x y", Plain), r"C:\x y");
}

#[test]
fn roots_are_offered_by_case_insensitive_prefix() {
    let root = r"C:\Users\Me\Proj";
    for typed in [
        "",
        "c",
        "C:",
        r"c:\",
        "c:/users/",
        r"C:\USERS\me\p",
        r"C:\Users\Me\Proj\",
    ] {
        assert!(leads_to(root, typed), "{typed}");
    }
    for typed in [
        "D:",
        r"C:\Users\Me\Proj2",
        r"C:\Users\Mex",
        r"C:\Users\Me\Proj\src",
    ] {
        assert!(!leads_to(root, typed), "{typed}");
    }
    assert!(leads_to(r"\\srv\share\d", "//SRV/share/"));
    assert!(leads_to(r"C:\", "c:/"));
}

#[test]
fn values_keep_the_typed_spelling_and_end_directories_with_a_separator() {
    assert_eq!(root_value(r"C:\Users\Me", Plain), r"C:\Users\Me\");
    assert_eq!(root_value(r"C:\", Plain), r"C:\");
    assert_eq!(root_value(r"C:\Users\Me Too", Uri), "C:/Users/Me%20Too/");
    assert_eq!(root_value(r"\\srv\share\d", Uri), "/srv/share/d/");
    assert_eq!(child_value("c:/users/", "Me", true, Plain), "c:/users/Me/");
    assert_eq!(
        child_value(r"C:\Users\", "Me", true, Plain),
        r"C:\Users\Me\"
    );
    assert_eq!(child_value(r"C:\x\", "a.rs", false, Plain), r"C:\x\a.rs");
    assert_eq!(
        child_value("C:/x y/", "%20#.rs", false, Uri),
        "C:/x%20y/%2520%23.rs"
    );
    assert_eq!(child_value("C:/x/", "sub", true, Uri), "C:/x/sub/");
    assert_eq!(child_value("//srv/share/", "d", true, Uri), "/srv/share/d/");
    // A URI value resolves back to the very path.
    let value = child_value("C:/x y/", "%20#.rs", false, Uri);
    assert_eq!(
        crate::platform::winpath::from_uri_path(
            "",
            &percent_encoding::percent_decode_str(&format!("/{value}")).decode_utf8_lossy()
        ),
        Some(r"C:\x y\%20#.rs".to_string())
    );
}
