//! A cheap per-file check before parsing C and C++ for one name: could any line where the
//! name occurs be where it is defined? Most files that mention a C function only call it
//! (`ret = f(x);`, `if (f(x))`, `f(x);`) or document it (`* f() …`), and parsing is what a
//! first query on a large C tree spends its time on, so such files are skipped unparsed.
//!
//! The check is conservative: a line is ruled out only by what a definition's name line
//! cannot have — before the name, outside balanced parentheses, one of `= , . ! ? [ " '
//! ;` or `->` or `return`, an open parenthesis (the name is an argument), or being a
//! comment line; after it, a final `;` (a call or a prototype; typedefs, `}` lines and
//! preprocessor lines are kept). A line starting with `typedef` is always kept (a function
//! pointer type's name is inside parentheses). Anything unusual keeps the file.

/// True when `text` has a line where `needle` (compared case-insensitively when
/// `insensitive`, in which case `needle` is lowercase) could be a definition's name.
pub(crate) fn may_define_c(text: &str, needle: &str, insensitive: bool) -> bool {
    if needle.is_empty() {
        return true;
    }
    let folded;
    let hay = if insensitive {
        folded = text.to_ascii_lowercase();
        folded.as_str()
    } else {
        text
    };
    let mut from = 0;
    while let Some(found) = hay[from..].find(needle) {
        let at = from + found;
        from = at + needle.len();
        let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        if line_may_define(&text[start..at], &text[at..end]) {
            return true;
        }
    }
    false
}

fn line_may_define(before: &str, after: &str) -> bool {
    let head = before.trim_start();
    if head.starts_with('#') {
        return true; // #define NAME, #  define NAME(x)
    }
    if head.starts_with("//") || head.starts_with("/*") || head == "*" || head.starts_with("* ") {
        return false; // a comment line
    }
    if head.starts_with("typedef") {
        return true; // typedef int (*name)(int); — the name is inside parentheses
    }
    let mut depth = 0i32;
    let bytes = head.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' => depth -= 1,
            _ if depth != 0 => {}
            b'=' | b',' | b'.' | b'!' | b'?' | b'[' | b'"' | b'\'' | b';' => return false,
            b'-' if bytes.get(i + 1) == Some(&b'>') => return false,
            _ => {}
        }
    }
    if depth != 0 {
        return false; // inside an argument list or a condition
    }
    if head
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|word| word == "return")
    {
        return false;
    }
    let tail = after.trim_end();
    if tail.ends_with(';') && !(head.starts_with("typedef") || head.starts_with('}')) {
        return false; // a call statement or a prototype
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definition_lines_are_kept() {
        for line in [
            "int nxsem_wait(FAR sem_t *sem)",
            "nxsem_wait(FAR sem_t *sem)",
            "static FAR char *nxsem_wait(void) {",
            "#define nxsem_wait(s) do_wait(s);",
            "#  define nxsem_wait 1",
            "struct nxsem_wait {",
            "} nxsem_wait;",
            "typedef struct foo nxsem_wait;",
            "typedef int (*nxsem_wait)(int irq, FAR void *arg);",
            "typedef void (nxsem_wait)(void);",
            "void weak_function nxsem_wait(void)",
            "begin_packed_struct struct nxsem_wait",
            "__attribute__((section(\".x\"), used)) int nxsem_wait(void)",
            "  void nxsem_wait() const { return; }",
            "template <typename T> T nxsem_wait(T a, T b) {",
            "void Foo::nxsem_wait(int x)",
            "int nxsem_wait(void) { return 0; }",
            "int nxsem_wait(void); /* a prototype with a comment: kept, harmless */",
        ] {
            assert!(may_define_c(line, "nxsem_wait", false), "{line}");
        }
    }

    #[test]
    fn calls_comments_and_prototypes_are_ruled_out() {
        for line in [
            "  ret = nxsem_wait(&sem);",
            "  nxsem_wait(&sem);",
            "  if (nxsem_wait(&sem) < 0)",
            "  return nxsem_wait(&sem)",
            "  foo(a, nxsem_wait(&sem))",
            " * Name: nxsem_wait",
            "/* nxsem_wait */",
            "// nxsem_wait",
            "  syslog(\"nxsem_wait failed\")",
            "  x->nxsem_wait(1)",
            "  s.nxsem_wait(1)",
            "int nxsem_wait(FAR sem_t *sem);",
        ] {
            assert!(!may_define_c(line, "nxsem_wait", false), "{line}");
        }
        // Any qualifying line keeps the file; case folding when asked.
        let file = "  ret = nxsem_wait(&s);\nint NXSEM_WAIT(void)\n";
        assert!(may_define_c(file, "nxsem_wait", true));
        assert!(!may_define_c(file, "nxsem_wait", false));
    }
}
