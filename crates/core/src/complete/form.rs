//! How completion values are written: as the `file:///{+path}` variable of the resource
//! template, or as plain paths typed by people (a leaf, used by the listing and the Windows
//! value text alike).

/// How values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Values of the `file:///{+path}` variable: percent-encoded exactly as the resource
    /// URIs are ([`crate::roots::file_uri_from_path`]), so `file:///` + value is the URI of
    /// the very bytes listed (`%`, `?`, `#`, spaces, newlines and bytes that are not UTF-8
    /// included). The typed value is percent-decoded the same way.
    Uri,
    /// Plain paths, as typed by people in prompt arguments: taken and returned as they are.
    /// Names that are not valid UTF-8 cannot be written in such a value and are skipped
    /// (they remain reachable through the `Uri` form and `file://` URIs).
    Plain,
}
