//! Reading files into documents for a segment: the text (at most [`MAX_INDEX_BYTES`],
//! binary files skipped), the definitions (from the symbol index when it vouches for the
//! file, else parsed here), then `docs::file_docs`. Used by the index's worker for whole
//! roots and updates, and by a query for the few files it indexes on demand.

use std::path::Path;
use std::sync::atomic::AtomicUsize;

use super::docs::{Doc, file_docs};
use super::segment::{Builder, FileState};
use crate::files::read::{Whole, read_whole};
use crate::index::Stamp;
use crate::platform::os::OsStrExt;
use crate::symbols::extract::{MAX_PARSE_BYTES, Parser, extract};
use crate::symbols::index::Snapshot;
use crate::symbols::{extract::Definition, lang::Lang};

/// Files larger than this are not indexed (generated tables, minified bundles): they are
/// listed, and said, but hold no documents.
pub(crate) const MAX_INDEX_BYTES: u64 = 1 << 20;

/// The same for files in no supported language (docs, build files, data): a text file
/// that large is a log, a data dump or a generated listing, not what a question is about,
/// and reading it would cost the build more than the rest of the root.
pub(crate) const MAX_TEXT_BYTES: u64 = 256 << 10;

/// A file's language as a segment stores it (`u8::MAX`: none).
pub(crate) fn lang_id(lang: Option<Lang>) -> u8 {
    lang.and_then(|l| Lang::ALL.iter().position(|x| *x == l))
        .map_or(u8::MAX, |p| p as u8)
}

/// The language a segment stored.
pub(crate) fn lang_of(id: u8) -> Option<Lang> {
    Lang::ALL.get(id as usize).copied()
}

/// One file read into documents.
pub(crate) struct Indexed {
    pub(crate) lang: u8,
    pub(crate) state: FileState,
    pub(crate) docs: Vec<Doc>,
    /// Parsed here (the symbol index could not vouch for it).
    pub(crate) parsed: bool,
}

/// Reads files of one root into documents (one per thread: it holds a parser).
pub(crate) struct Indexer<'a> {
    root: &'a Path,
    symbols: Option<&'a Snapshot>,
    parser: Parser,
    abort: &'a AtomicUsize,
}

impl<'a> Indexer<'a> {
    /// `symbols`: the symbol index's snapshot of the root, whose definitions are used for
    /// the files it vouches for; `abort` interrupts a parse.
    pub(crate) fn new(
        root: &'a Path,
        symbols: Option<&'a Snapshot>,
        abort: &'a AtomicUsize,
    ) -> Indexer<'a> {
        Indexer {
            root,
            symbols,
            parser: Parser::new(),
            abort,
        }
    }

    /// The documents of the file `rel` (of `size` bytes as listed).
    pub(crate) fn file(&mut self, rel: &Path, size: u64) -> Indexed {
        let lang = Lang::from_path(rel);
        let skipped = |state| Indexed {
            lang: lang_id(lang),
            state,
            docs: Vec::new(),
            parsed: false,
        };
        let cap = if lang.is_some() {
            MAX_INDEX_BYTES
        } else {
            MAX_TEXT_BYTES
        };
        if size > cap {
            return skipped(FileState::TooLarge);
        }
        let path = self.root.join(rel);
        let text = match read_whole(&path, cap) {
            Ok(Whole::Text(text)) => text,
            Ok(Whole::TooLarge(_)) => return skipped(FileState::TooLarge),
            Ok(Whole::Binary(_)) | Err(_) => return skipped(FileState::Skipped),
        };
        let (defs, parsed) = self.definitions(&path, lang, &text);
        Indexed {
            lang: lang_id(lang),
            state: FileState::Indexed,
            docs: file_docs(&text, &defs, lang == Some(Lang::Python)),
            parsed,
        }
    }

    fn definitions(
        &mut self,
        path: &Path,
        lang: Option<Lang>,
        text: &str,
    ) -> (Vec<Definition>, bool) {
        let Some(lang) = lang else {
            return (Vec::new(), false);
        };
        if text.len() > MAX_PARSE_BYTES {
            return (Vec::new(), false);
        }
        if let Some(defs) = self.symbols.and_then(|s| s.file_definitions(path)) {
            return (defs, false);
        }
        let defs = extract(&mut self.parser, lang, text.as_bytes(), Some(self.abort));
        (defs.unwrap_or_default(), true)
    }

    /// Reads `rel` and adds it to `builder` with `stamp`; whether it was parsed here.
    pub(crate) fn add_to(&mut self, builder: &mut Builder, rel: &Path, stamp: Stamp) -> bool {
        let indexed = self.file(rel, stamp.0);
        indexed.add_to(builder, rel, stamp);
        indexed.parsed
    }
}

impl Indexed {
    /// Adds the file `rel`, read at `stamp`, to `builder` with these documents.
    pub(crate) fn add_to(&self, builder: &mut Builder, rel: &Path, stamp: Stamp) {
        builder.add(
            rel.as_os_str().as_bytes(),
            stamp,
            self.lang,
            self.state,
            &self.docs,
        );
    }
}
