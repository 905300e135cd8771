//! MIME types for files served as resources: from the extension for common source and
//! document types, else from the content (text or binary).

use std::path::Path;

/// The MIME type of a file, given whether its content looked like text.
pub fn mime_type(path: &Path, is_text: bool) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let by_ext = match ext.as_str() {
        "rs" => "text/x-rust",
        "py" => "text/x-python",
        "js" | "mjs" | "cjs" => "text/javascript",
        "ts" | "tsx" | "mts" | "cts" => "text/x-typescript",
        "jsx" => "text/javascript",
        "go" => "text/x-go",
        "c" | "h" => "text/x-c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "text/x-c++",
        "java" => "text/x-java",
        "kt" | "kts" => "text/x-kotlin",
        "rb" => "text/x-ruby",
        "sh" | "bash" | "zsh" => "text/x-shellscript",
        "md" | "markdown" => "text/markdown",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "json" => "application/json",
        "toml" => "application/toml",
        "yaml" | "yml" => "application/yaml",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "gz" => "application/gzip",
        "wasm" => "application/wasm",
        _ => "",
    };
    if !by_ext.is_empty() {
        by_ext
    } else if is_text {
        "text/plain"
    } else {
        "application/octet-stream"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_extension_then_content() {
        assert_eq!(mime_type(Path::new("a/b.RS"), true), "text/x-rust");
        assert_eq!(mime_type(Path::new("Makefile"), true), "text/plain");
        assert_eq!(
            mime_type(Path::new("x.bin"), false),
            "application/octet-stream"
        );
    }
}
