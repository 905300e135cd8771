//! Windows path text, as pure functions that run (and are tested) on every platform:
//! `\\?\` verbatim prefixes, drive letters, UNC shares, mixed separators, `file:///C:/…`
//! URIs, reserved device names, and comparing paths the way NTFS does (ignoring case).

/// `path` without its verbatim prefix, with `/` turned into `\` and no trailing `\`
/// (except after a drive's root): `\\?\C:\x` → `C:\x`, `\\?\UNC\srv\share\x` →
/// `\\srv\share\x`, `C:/x/y/` → `C:\x\y`. Other text is returned with separators unified.
pub fn plain(path: &str) -> String {
    let mut body = unified(path);
    while body.ends_with('\\') && !is_drive_root(&body) && body.len() > 1 {
        body.pop();
    }
    body
}

/// `path` with `/` turned into `\` and without its verbatim prefix, trailing separators
/// kept (they matter while a path is being typed: `C:\Users\` is not a prefix of
/// `C:\Users2`).
pub(crate) fn unified(path: &str) -> String {
    let unified = path.replace('/', "\\");
    if let Some(rest) =
        strip_prefix_ci(&unified, r"\\?\UNC\").or_else(|| strip_prefix_ci(&unified, r"\\.\UNC\"))
    {
        format!(r"\\{rest}")
    } else if let Some(rest) = unified
        .strip_prefix(r"\\?\")
        .or_else(|| unified.strip_prefix(r"\??\"))
    {
        rest.to_string()
    } else {
        unified
    }
}

/// Whether `path` is an absolute Windows path: a drive and its root (`C:\`, `c:/`) or a
/// UNC share (`\\srv\share`, `//srv/share`), verbatim prefixes included.
pub fn is_absolute(path: &str) -> bool {
    let path = unified(path);
    let b = path.as_bytes();
    (has_drive(&path) && b.get(2) == Some(&b'\\')) || path.starts_with(r"\\")
}

/// The ordinary form of a verbatim path (`\\?\C:\x` → `C:\x`, `\\?\UNC\srv\share\x` →
/// `\\srv\share\x`) when Win32 parses that form back to the very same path, else `None`.
///
/// `\\?\` paths reach the file system untouched; ordinary ones are normalised first: a
/// trailing dot or space is dropped from a name, `.`/`..` are collapsed, device names
/// (`NUL`, `COM1.txt`) name the device. A name the normalising would change keeps the
/// verbatim form, which is then the only exact way to write it (`x.` is not `x`; a
/// directory named `.. ` must never become `..`). Paths already ordinary and other
/// verbatim forms (`\\?\Volume{…}\`, `\\?\GLOBALROOT\…`) give `None`.
pub(crate) fn exact_plain(path: &str) -> Option<String> {
    let (lead, rest) = if let Some(rest) = strip_prefix_ci(path, r"\\?\UNC\") {
        (r"\\", rest)
    } else {
        let rest = path.strip_prefix(r"\\?\")?;
        let b = rest.as_bytes();
        if !(b.len() >= 3 && has_drive(rest) && b[2] == b'\\') {
            return None;
        }
        ("", rest)
    };
    let mut names: Vec<&str> = rest.split('\\').collect();
    if lead.is_empty() {
        names.remove(0); // the drive, checked above
    } else if names.len() < 2 {
        return None; // a UNC path names a server and a share at least
    }
    let last = names.len() - 1;
    let exact = names.iter().enumerate().all(|(i, name)| {
        // Only the last name may be empty: a drive's root (`C:\`) or a trailing separator.
        if name.is_empty() {
            return i == last && (i > 0 || lead.is_empty());
        }
        *name != "."
            && *name != ".."
            && !name.ends_with(['.', ' '])
            && !name
                .chars()
                .any(|c| c < ' ' || matches!(c, '<' | '>' | ':' | '"' | '/' | '|' | '?' | '*'))
            && !is_reserved_name(name)
    });
    exact.then(|| format!("{lead}{rest}"))
}

/// A Windows path as shown to people: the ordinary form when it names exactly the same
/// file ([`exact_plain`]), else the path as it is.
pub fn display(path: &str) -> String {
    exact_plain(path).unwrap_or_else(|| path.to_string())
}

fn strip_prefix_ci<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

fn is_drive_root(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'\\'
}

/// True when `text` starts with a drive letter and a colon (`C:`, `c:/x`).
pub fn has_drive(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// The key NTFS compares names by: case folded (NTFS's upcase table maps each UTF-16 unit
/// to its simple uppercase; `to_uppercase` agrees for everything but a few characters
/// whose uppercase is several characters, which are kept as they are).
pub fn fold(path: &str) -> String {
    path.chars()
        .map(|c| {
            let mut up = c.to_uppercase();
            match (up.next(), up.next()) {
                (Some(one), None) => one,
                _ => c,
            }
        })
        .collect()
}

/// Whether two Windows paths name the same place, compared as the file system does:
/// verbatim prefixes and separators do not matter, case does not matter.
#[cfg_attr(not(windows), allow(dead_code))] // the Windows opener's check
pub(crate) fn same_path(a: &str, b: &str) -> bool {
    fold(&plain(a)) == fold(&plain(b))
}

/// Whether `path` is `base` or lies below it (component-wise, ignoring case and prefixes).
pub fn starts_with(path: &str, base: &str) -> bool {
    let (path, base) = (fold(&plain(path)), fold(&plain(base)));
    if path == base {
        return true;
    }
    let base = if base.ends_with('\\') {
        base
    } else {
        format!("{base}\\")
    };
    path.starts_with(&base)
}

/// Device names Windows resolves in every directory (`CON`, `NUL`, `COM1`, …), also with an
/// extension (`nul.txt`) and trailing dots or spaces, as Win32 path parsing treats them.
pub(crate) fn is_reserved_name(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or("");
    let stem = stem.trim_end_matches([' ', '.']);
    let upper = stem.to_ascii_uppercase();
    match upper.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$" => true,
        _ => {
            let b = upper.as_bytes();
            b.len() == 4
                && (upper.starts_with("COM") || upper.starts_with("LPT"))
                && matches!(b[3], b'1'..=b'9')
        }
    }
}

/// Why a path naming the device `name` is refused (for every caller that refuses one).
pub fn reserved_refusal(name: &str) -> String {
    format!("{name} is a reserved device name on Windows; special files are refused")
}

/// Why `path` is refused before any system call: it names an alternate data stream or a
/// reserved device name. `None` for an ordinary path.
pub fn refused_name(path: &str) -> Option<String> {
    if let Some(name) = stream_component(path) {
        return Some(format!(
            "{name:?} names an NTFS alternate data stream (a ':' in a name); streams are \
             refused, name the file itself"
        ));
    }
    reserved_component(path).map(reserved_refusal)
}

/// The first component of `path` that is a reserved device name, if any.
pub fn reserved_component(path: &str) -> Option<&str> {
    path.split(['\\', '/'])
        .filter(|part| !part.is_empty() && !part.ends_with(':'))
        .find(|part| is_reserved_name(part))
}

/// The first name in `path` that holds a `:` (other than the drive's): on NTFS `name:x`
/// and `name::$DATA` name a file's alternate data stream, a second content hidden from
/// listings, not a file of its own.
pub fn stream_component(path: &str) -> Option<&str> {
    let rest = strip_prefix_ci(path, r"\\?\UNC\")
        .or_else(|| path.strip_prefix(r"\\?\"))
        .or_else(|| path.strip_prefix(r"\??\"))
        .unwrap_or(path);
    let rest = if has_drive(rest) { &rest[2..] } else { rest };
    rest.split(['\\', '/']).find(|name| name.contains(':'))
}

/// The Windows path of a decoded `file:` URI path: `/C:/x` → `C:\x`, `//srv/share/x` (a host
/// given) → `\\srv\share\x`; `None` when it names no drive or share.
pub fn from_uri_path(host: &str, path: &str) -> Option<String> {
    if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
        return Some(format!(r"\\{host}{}", path.replace('/', "\\")));
    }
    // `file:////srv/share/x`: the share written in the path (an empty host).
    if let Some(unc) = path.strip_prefix("//")
        && !unc.starts_with('/')
        && host.is_empty()
    {
        return Some(format!(r"\\{}", unc.replace('/', "\\")));
    }
    let rest = path.strip_prefix('/').unwrap_or(path);
    let rest = rest.replacen('|', ":", 1);
    if has_drive(&rest) {
        let mut out = rest.replace('/', "\\");
        if out.len() == 2 {
            out.push('\\');
        }
        Some(out)
    } else {
        None
    }
}

/// The URI path (before percent-encoding) of a Windows path: `\\?\C:\x` → `/C:/x`,
/// `\\srv\share\x` → host `srv`, path `/share/x`.
pub(crate) fn to_uri_parts(path: &str) -> (String, String) {
    let plain = plain(path);
    if let Some(unc) = plain.strip_prefix(r"\\") {
        let (host, rest) = unc.split_once('\\').unwrap_or((unc, ""));
        return (host.to_string(), format!("/{}", rest.replace('\\', "/")));
    }
    (String::new(), format!("/{}", plain.replace('\\', "/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbatim_prefixes_drop_away() {
        assert_eq!(plain(r"\\?\C:\work\x"), r"C:\work\x");
        assert_eq!(plain(r"\\?\Z:\"), r"Z:\");
        assert_eq!(plain(r"\\?\UNC\srv\share\dir"), r"\\srv\share\dir");
        assert_eq!(plain(r"\\?\unc\srv\share"), r"\\srv\share");
        assert_eq!(plain(r"\??\C:\x"), r"C:\x");
        assert_eq!(plain(r"C:\x\"), r"C:\x");
    }

    #[test]
    fn verbatim_paths_show_plain_only_when_exact() {
        assert_eq!(
            exact_plain(r"\\?\C:\work\x.rs").as_deref(),
            Some(r"C:\work\x.rs")
        );
        assert_eq!(exact_plain(r"\\?\C:\").as_deref(), Some(r"C:\"));
        assert_eq!(
            exact_plain(r"\\?\UNC\srv\share\d").as_deref(),
            Some(r"\\srv\share\d")
        );
        assert_eq!(
            exact_plain(r"\\?\C:\Program Files (x86)\设计 ü.md").as_deref(),
            Some(r"C:\Program Files (x86)\设计 ü.md")
        );
        // Names Win32 would rewrite keep the verbatim form.
        for exact_only in [
            r"\\?\C:\work\x.",
            r"\\?\C:\work\x \y",
            r"\\?\C:\work\.. \secret",
            r"\\?\C:\work\..\secret",
            r"\\?\C:\work\nul.txt",
            r"\\?\C:\work\COM1",
            r"\\?\C:\a\\b",
            r"\\?\C:\a\b?",
            r"\\?\Volume{0b1e}\x",
            r"\\?\GLOBALROOT\Device\x",
            r"\\?\UNC\\x",
            r"C:\work\x",
            r"/usr/lib",
        ] {
            assert_eq!(exact_plain(exact_only), None, "{exact_only}");
        }
        assert_eq!(display(r"\\?\C:\work\x"), r"C:\work\x");
        assert_eq!(display(r"\\?\C:\work\x."), r"\\?\C:\work\x.");
        assert_eq!(display(r"C:\work\x"), r"C:\work\x");
    }

    #[test]
    fn mixed_separators_are_one_separator() {
        assert_eq!(plain("C:/work/src\\lib.rs"), r"C:\work\src\lib.rs");
        assert!(same_path("c:/Work/SRC", r"\\?\C:\work\src\"));
        assert!(!same_path(r"C:\work\src", r"C:\work\src2"));
    }

    #[test]
    fn containment_ignores_case_and_prefix_but_not_name_prefixes() {
        assert!(starts_with(r"\\?\C:\Work\app\x.rs", r"c:\work\APP"));
        assert!(starts_with(r"C:\work\app", r"\\?\C:\work\app\"));
        assert!(!starts_with(r"C:\work\app2\x", r"C:\work\app"));
        assert!(starts_with(r"C:\x", r"C:\"));
        assert!(starts_with(r"\\srv\share\a\b", r"\\?\UNC\srv\share"));
        assert!(!starts_with(r"D:\work\app", r"C:\work\app"));
    }

    #[test]
    fn case_folding_is_per_character() {
        assert!(same_path(r"C:\Ärger\ß", r"c:\ärger\ß"));
        assert_eq!(fold("straße"), "STRAßE");
    }

    #[test]
    fn reserved_device_names() {
        for name in [
            "CON",
            "con",
            "NUL",
            "nul.txt",
            "Com1",
            "LPT9",
            "aux.tar.gz",
            "NUL ",
            "prn.",
        ] {
            assert!(is_reserved_name(name), "{name}");
        }
        for name in ["CONSOLE", "nul_", "COM0", "COM10", "x.nul", "lpt", "a"] {
            assert!(!is_reserved_name(name), "{name}");
        }
        assert_eq!(reserved_component(r"C:\work\NUL"), Some("NUL"));
        assert_eq!(
            reserved_component(r"\\?\C:\work\com1.log"),
            Some("com1.log")
        );
        assert_eq!(reserved_component(r"C:\work\ok\file.txt"), None);
    }

    #[test]
    fn alternate_data_streams_are_found_in_any_name() {
        assert_eq!(
            stream_component(r"C:\w\file.txt:secret"),
            Some("file.txt:secret")
        );
        assert_eq!(stream_component(r"\\?\C:\w\f::$DATA"), Some("f::$DATA"));
        assert_eq!(stream_component("src/x:y/z"), Some("x:y"));
        assert_eq!(stream_component(r"\\?\UNC\srv\share\a:b"), Some("a:b"));
        assert_eq!(stream_component(r"C:\w\file.txt"), None);
        assert_eq!(stream_component("c:/w/x"), None);
        assert_eq!(stream_component(r"\\?\C:\"), None);
        assert_eq!(stream_component("notes.txt"), None);
    }

    #[test]
    fn file_uris_with_drive_letters_and_hosts() {
        assert_eq!(
            from_uri_path("", "/C:/work/x"),
            Some(r"C:\work\x".to_string())
        );
        assert_eq!(from_uri_path("localhost", "/c:/"), Some(r"c:\".to_string()));
        assert_eq!(from_uri_path("", "/C:"), Some(r"C:\".to_string()));
        assert_eq!(from_uri_path("", "/C|/old"), Some(r"C:\old".to_string()));
        assert_eq!(
            from_uri_path("srv", "/share/dir"),
            Some(r"\\srv\share\dir".to_string())
        );
        assert_eq!(from_uri_path("", "/usr/lib"), None);
        assert_eq!(
            from_uri_path("", "//srv/share/d"),
            Some(r"\\srv\share\d".to_string())
        );
        assert_eq!(from_uri_path("", "///x"), None);
        assert_eq!(
            to_uri_parts(r"\\?\C:\work\x y"),
            (String::new(), "/C:/work/x y".to_string())
        );
        assert_eq!(
            to_uri_parts(r"\\?\UNC\srv\share\d"),
            ("srv".to_string(), "/share/d".to_string())
        );
    }

    #[test]
    fn absolute_paths_and_unified_separators() {
        for path in [r"C:\", "c:/x", r"\\srv\share", "//srv/share/x", r"\\?\C:\x"] {
            assert!(is_absolute(path), "{path}");
        }
        for path in ["C:", "C:x", r"x\y", "/x", r"\x"] {
            assert!(!is_absolute(path), "{path}");
        }
        assert_eq!(unified("c:/Users/"), r"c:\Users\");
        assert_eq!(unified(r"\\?\UNC\srv\s/"), r"\\srv\s\");
    }

    #[test]
    fn drive_detection() {
        assert!(has_drive("C:"));
        assert!(has_drive("z:/x"));
        assert!(!has_drive("/C:"));
        assert!(!has_drive("1:"));
    }
}
