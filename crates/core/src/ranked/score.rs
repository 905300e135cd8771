//! Ranking: BM25F over the documents of one or more segments, with the weights and
//! rules the ranking benchmark chose (`bench/results/rank-proto/DECISIONS.md`;
//! DECISIONS.md, "Ranked search", says what each measured).
//!
//! For a document d and a query term t, the fields' counts are summed after each is
//! normalised by its own length: tf~ = Σ_f w_f · tf_f / (1 − b_f + b_f · len_f / avglen_f);
//! the term weighs idf(t) · tf~ · (k1 + 1) / (k1 + tf~), times the query term's own weight
//! (2 for a code-like word's whole token, × 1.5 in a longer query's first line). A word's
//! other inflections (`english.rs`) are read as the word: their documents join its document
//! frequency, their counts its tf~ at half weight. A query's `subsystem:` prefix then
//! multiplies a document's score by 1 + 0.5·(share of its segments found in the document's
//! path). A definition's name counts once more: one the query names whole (a code word,
//! `add_config_value()`) × 1.5, one whose name's parts the query's subject says × (1 + 0.3
//! · share said). Statistics (document count, df, average lengths) are taken over every
//! segment scored together, so roots and a base with its update score on one scale.

use super::docs::{FIELDS, NAME};
use super::english::FORM_WEIGHT;
use super::segment::Segment;
use super::terms::Query;

pub(crate) const K1: f32 = 1.2;
/// Field weights: name, container, comment, body; then the path (4.5, not the prototype's
/// 1.5: chosen on the development sets of eight repositories; DECISIONS.md, "Ranked search
/// on repositories never tuned on").
pub(crate) const WEIGHTS: [f32; FIELDS] = [3.0, 2.0, 1.5, 1.0];
pub(crate) const PATH_WEIGHT: f32 = 4.5;
/// Length normalisation per field, then the path's.
pub(crate) const B: [f32; FIELDS] = [0.5, 0.5, 0.75, 0.75];
pub(crate) const PATH_B: f32 = 0.5;
/// How much a path hint can raise a score.
pub(crate) const HINT_BETA: f32 = 0.5;
/// How much a file the query names (`timer.c`, `src/a.rs:12`) raises its documents' scores.
pub(crate) const FILE_REF_BETA: f32 = 0.5;
/// How far above the best other document the definition holding a named line is put.
pub(crate) const LINE_REF_BETA: f32 = 0.25;
/// How much the definition holding a quoted message's line gains.
pub(crate) const PHRASE_BETA: f32 = 0.5;
/// A reference matching more files than this (`mod.rs`) names none of them.
const MAX_REF_FILES: usize = 16;
/// How much a definition the query names (a code word of the query is its whole name:
/// `add_config_value()`) gains over the bodies that merely use it.
pub(crate) const NAMED_BETA: f32 = 0.5;
/// A name mark's flag: the query names the definition.
const NAMED: u16 = 1 << 15;
/// How much a definition gains when the query's subject says every part of its name
/// (`refresh_config` for "fix config refresh"); a share of its parts, a share of it.
pub(crate) const SUBJECT_NAME_BETA: f32 = 0.3;

/// One segment as a query scores it: which of its files are live (served: not replaced
/// by a newer segment, not changed since) and which of those the request keeps (in the
/// targets, of a wanted language), and which document kinds.
pub(crate) struct Part<'a> {
    pub(crate) seg: &'a Segment,
    /// Per file: live. The statistics count live documents, whatever the filters, so a
    /// filter never changes a score, and an index updated by changes scores exactly as
    /// one built from scratch.
    pub(crate) live: Vec<bool>,
    /// Per file: live and kept.
    pub(crate) files: Vec<bool>,
    /// Kinds wanted (by position in `docs::KIND_NAMES`); empty: all.
    pub(crate) kinds: &'a [u8],
}

/// A scored document.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Scored {
    pub(crate) part: usize,
    pub(crate) doc: u32,
    pub(crate) score: f32,
}

/// Collection statistics over the parts' live documents.
struct Stats {
    docs: f32,
    avg: [f32; FIELDS + 1],
}

fn stats(parts: &[Part]) -> Stats {
    let mut docs = 0u64;
    let mut totals = [0u64; FIELDS + 1];
    for p in parts {
        for (file, f) in p.seg.files().iter().enumerate() {
            if !p.live[file] {
                continue;
            }
            docs += u64::from(f.count);
            totals[FIELDS] += u64::from(f.count) * u64::from(f.path_len);
            for d in &p.seg.docs()[f.first as usize..(f.first + f.count) as usize] {
                for (t, len) in totals.iter_mut().zip(d.lens) {
                    *t += u64::from(len);
                }
            }
        }
    }
    let mut avg = [1.0f32; FIELDS + 1];
    for (a, t) in avg.iter_mut().zip(totals) {
        if docs > 0 && t > 0 {
            *a = t as f32 / docs as f32;
        }
    }
    Stats {
        docs: docs as f32,
        avg,
    }
}

/// Lucene's idf: never negative.
fn idf(n: f32, df: f32) -> f32 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// One part's running scores.
struct Scores {
    score: Vec<f32>,
    /// The current term's tf~ per document (zero again after each term).
    tfw: Vec<f32>,
    /// Documents the current term reached (live ones, kept or not: the df counts them).
    reached: Vec<u32>,
    /// What the query says of each document's name: [`NAMED`] when it names it, plus how
    /// many of its parts the subject says (`names`).
    name_marks: Vec<u16>,
    touched: Vec<u32>,
}

/// The best `want` documents of the parts for `query`, best first (ties in path order,
/// then by line), and how many documents scored at all.
pub(crate) fn top(parts: &[Part], query: &Query, want: usize) -> (Vec<Scored>, usize) {
    let stats = stats(parts);
    let mut scores: Vec<Scores> = parts
        .iter()
        .map(|p| Scores {
            score: vec![0.0; p.seg.docs().len()],
            tfw: vec![0.0; p.seg.docs().len()],
            name_marks: vec![0; p.seg.docs().len()],
            reached: Vec::new(),
            touched: Vec::new(),
        })
        .collect();
    for qt in &query.terms {
        let mut df = 0u32;
        for (part, s) in parts.iter().zip(scores.iter_mut()) {
            df += reach(part, s, qt.term, Some(qt), &stats);
            for &form in &qt.forms {
                df += reach(part, s, form, None, &stats);
            }
        }
        if df == 0 {
            continue;
        }
        let idf = idf(stats.docs, df as f32);
        for (part, s) in parts.iter().zip(scores.iter_mut()) {
            let docs = part.seg.docs();
            for doc in std::mem::take(&mut s.reached) {
                let t = std::mem::take(&mut s.tfw[doc as usize]);
                if !wanted(part, &docs[doc as usize]) {
                    continue;
                }
                if s.score[doc as usize] == 0.0 {
                    s.touched.push(doc);
                }
                s.score[doc as usize] += qt.weight * idf * t * (K1 + 1.0) / (K1 + t);
            }
        }
    }
    let mut found: Vec<Scored> = Vec::new();
    for (part, s) in parts.iter().zip(scores.iter_mut()) {
        hint(part, s, query);
        prior(part, s);
        names(part, s);
    }
    refs(parts, &mut scores, query);
    for (at, s) in scores.iter().enumerate() {
        found.extend(s.touched.iter().map(|&doc| Scored {
            part: at,
            doc,
            score: s.score[doc as usize],
        }));
    }
    let total = found.len();
    let order = |a: &Scored, b: &Scored| {
        b.score.total_cmp(&a.score).then_with(|| {
            let (pa, pb) = (&parts[a.part], &parts[b.part]);
            let (da, db) = (
                &pa.seg.docs()[a.doc as usize],
                &pb.seg.docs()[b.doc as usize],
            );
            crate::index::cmp_paths(pa.seg.path(da.file), pb.seg.path(db.file))
                .then(da.line.cmp(&db.line))
                .then(da.end_line.cmp(&db.end_line))
        })
    };
    if found.len() > want && want > 0 {
        found.select_nth_unstable_by(want - 1, order);
        found.truncate(want);
    }
    found.sort_by(order);
    found.truncate(want);
    (found, total)
}

fn wanted(part: &Part, d: &super::segment::SegDoc) -> bool {
    part.files.get(d.file as usize).copied().unwrap_or(false)
        && (part.kinds.is_empty() || part.kinds.contains(&d.kind))
}

/// Adds `term`'s tf~ of every live document of `part` holding it to `s.tfw` (listing them
/// in `s.reached`); returns how many it reached first (its share of the df: a word's forms
/// count as the word, so a document holding two of them counts once). `own` is the query
/// term when `term` is it (its tf~ weighs 1, and what it says of names is marked), `None`
/// for one of its forms (weighing [`FORM_WEIGHT`]).
fn reach(
    part: &Part,
    s: &mut Scores,
    term: super::terms::Term,
    own: Option<&super::terms::QueryTerm>,
    stats: &Stats,
) -> u32 {
    let weight = if own.is_some() { 1.0 } else { FORM_WEIGHT };
    let seg = part.seg;
    let (docs, files) = (seg.docs(), seg.files());
    let live_doc = |doc: u32| part.live.get(docs[doc as usize].file as usize) == Some(&true);
    let norm = |f: usize, len: u16| 1.0 - B[f] + B[f] * f32::from(len) / stats.avg[f];
    let mut df = 0u32;
    seg.postings(term, |p| {
        if !live_doc(p.doc) {
            return;
        }
        let d = &docs[p.doc as usize];
        let mut sum = 0.0;
        for (f, (&tf, &len)) in p.tf.iter().zip(&d.lens).enumerate() {
            if tf > 0 {
                sum += weight * WEIGHTS[f] * tf as f32 / norm(f, len);
            }
        }
        if s.tfw[p.doc as usize] == 0.0 {
            s.reached.push(p.doc);
            df += 1;
        }
        s.tfw[p.doc as usize] += sum;
        if let Some(qt) = own.filter(|_| p.tf[NAME] > 0 && d.name_len > 0) {
            let mark = &mut s.name_marks[p.doc as usize];
            // A code word names the definition when it is its whole name: the whole
            // token of an identifier that splits, or a one-part name's only part.
            if qt.code && (qt.whole || d.lens[NAME] == 1) {
                *mark |= NAMED;
            }
            if qt.subject && !qt.whole {
                let said = (*mark & !NAMED)
                    .saturating_add(p.tf[NAME] as u16)
                    .min(!NAMED);
                *mark = (*mark & NAMED) | said;
            }
        }
    });
    seg.path_postings(term, |file, tf| {
        if !part.live[file as usize] {
            return;
        }
        let f = &files[file as usize];
        let add = weight * PATH_WEIGHT * tf as f32
            / (1.0 - PATH_B + PATH_B * f32::from(f.path_len) / stats.avg[FIELDS]);
        for doc in f.doc_ids() {
            if s.tfw[doc as usize] == 0.0 {
                s.reached.push(doc);
                df += 1;
            }
            s.tfw[doc as usize] += add;
        }
    });
    df
}

/// What a document's kind is worth beside a function's (1): a type-like definition, a
/// region of a source file, a region of any other file (docs, build files). Measured on
/// the ranking benchmark (DECISIONS.md): without them regions and types fill the first
/// page and function hit@5 falls 10 to 14 points; these are the mildest that recover it.
pub(crate) const TYPE_PRIOR: f32 = 0.7;
pub(crate) const CODE_REGION_PRIOR: f32 = 0.5;
pub(crate) const TEXT_REGION_PRIOR: f32 = 0.3;

fn prior(part: &Part, s: &mut Scores) {
    let (docs, files) = (part.seg.docs(), part.seg.files());
    for &doc in &s.touched {
        let d = &docs[doc as usize];
        let factor = match super::docs::KIND_NAMES.get(d.kind as usize).copied() {
            Some("function" | "method" | "constructor") => continue,
            Some(super::docs::REGION)
                if files
                    .get(d.file as usize)
                    .is_some_and(|f| f.lang != u8::MAX) =>
            {
                CODE_REGION_PRIOR
            }
            Some(super::docs::REGION) => TEXT_REGION_PRIOR,
            _ => TYPE_PRIOR,
        };
        s.score[doc as usize] *= factor;
    }
}

/// Favours definitions by their names: one the query names gains [`NAMED_BETA`], and one
/// whose name's parts the query's subject says gains [`SUBJECT_NAME_BETA`] times the
/// share it says. A body calling `add_config_value` ten times otherwise outscores its
/// definition, and a short question's words are most often the parts of the name it is
/// about. The subject only: a report's body says many words, so any name's parts are
/// found there (DECISIONS.md, "A definition's name in the query"). What the query says of
/// each name was marked while its terms' postings were read (`reach`): a name is in its
/// document's name field, split as the text is, so its parts are that field's tokens but
/// the whole (`add_config_value` → `add`, `config`, `value`, `add_config_value`).
fn names(part: &Part, s: &mut Scores) {
    let docs = part.seg.docs();
    for &doc in &s.touched {
        let mark = s.name_marks[doc as usize];
        if mark == 0 {
            continue;
        }
        if mark & NAMED != 0 {
            s.score[doc as usize] *= 1.0 + NAMED_BETA;
        }
        let tokens = docs[doc as usize].lens[NAME];
        let parts = if tokens > 1 { tokens - 1 } else { tokens };
        let said = (mark & !NAMED).min(parts);
        if said > 0 {
            s.score[doc as usize] *= 1.0 + SUBJECT_NAME_BETA * f32::from(said) / f32::from(parts);
        }
    }
}

/// Favours what the query's code references name (`refs.rs`): each scored document of a
/// named file × (1 + [`FILE_REF_BETA`]), once per file; then the innermost document holding
/// a line the query names is put [`LINE_REF_BETA`] above the best score of the answer
/// (scored even when it holds no query word), so a stack trace's frames come first; one
/// holding a quoted message's line gains [`PHRASE_BETA`].
fn refs(parts: &[Part], scores: &mut [Scores], query: &Query) {
    if query.refs.is_empty() {
        return;
    }
    // Per part: (file, line, firm) of every reference that names one of its files.
    let named: Vec<Vec<(u32, Option<u32>, bool)>> = parts
        .iter()
        .map(|part| {
            let seg = part.seg;
            let mut out = Vec::new();
            for r in &query.refs {
                let mut files = Vec::new();
                seg.path_postings(super::terms::hash(&r.stem()), |file, _| {
                    if part.live.get(file as usize) == Some(&true) && r.names(seg.path(file)) {
                        files.push(file);
                    }
                });
                if files.len() <= MAX_REF_FILES {
                    out.extend(files.into_iter().map(|file| (file, r.line, r.firm)));
                }
            }
            out
        })
        .collect();
    for ((part, s), named) in parts.iter().zip(scores.iter_mut()).zip(&named) {
        let mut boosted = std::collections::HashSet::new();
        for &(file, _, _) in named {
            if !boosted.insert(file) {
                continue;
            }
            for doc in part.seg.files()[file as usize].doc_ids() {
                if s.score[doc as usize] > 0.0 {
                    s.score[doc as usize] *= 1.0 + FILE_REF_BETA;
                }
            }
        }
    }
    let best = scores
        .iter()
        .flat_map(|s| s.touched.iter().map(|&d| s.score[d as usize]))
        .fold(0.0f32, f32::max);
    let best = if best > 0.0 { best } else { 1.0 };
    for ((part, s), named) in parts.iter().zip(scores.iter_mut()).zip(&named) {
        let docs = part.seg.docs();
        for &(file, line, firm) in named {
            let Some(line) = line else { continue };
            let f = &part.seg.files()[file as usize];
            let holding = f
                .doc_ids()
                .filter(|&doc| {
                    let d = &docs[doc as usize];
                    d.line <= line && line <= d.end_line && wanted(part, d)
                })
                .min_by_key(|&doc| docs[doc as usize].end_line - docs[doc as usize].line);
            match holding {
                Some(doc) if firm => {
                    if s.score[doc as usize] == 0.0 {
                        s.touched.push(doc);
                    }
                    let score = &mut s.score[doc as usize];
                    *score = score.max(best) * (1.0 + LINE_REF_BETA);
                }
                Some(doc) => s.score[doc as usize] *= 1.0 + PHRASE_BETA,
                None => {}
            }
        }
    }
}

/// Multiplies the scores by the path hint's factor: 1 + β · (hint segments among the
/// file's path tokens) / (hint segments), read from the path postings (a file's path
/// tokens hold each of its segments squeezed, the hint's form).
fn hint(part: &Part, s: &mut Scores, query: &Query) {
    if query.hint.is_empty() || s.touched.is_empty() {
        return;
    }
    let mut hits = vec![0u16; part.seg.files().len()];
    for h in &query.hint {
        part.seg.path_postings(super::terms::hash(h), |file, _| {
            hits[file as usize] += 1;
        });
    }
    let share = HINT_BETA / query.hint.len() as f32;
    let docs = part.seg.docs();
    for &doc in &s.touched {
        let file = docs[doc as usize].file as usize;
        if hits[file] > 0 {
            s.score[doc as usize] *= 1.0 + share * f32::from(hits[file]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranked::docs::file_docs;
    use crate::ranked::segment::{Builder, FileState};
    use crate::ranked::terms::parse_query;
    use crate::symbols::extract::Definition;

    fn def(name: &str, line: u64, end_line: u64) -> Definition {
        Definition {
            name: name.into(),
            kind: "function",
            line,
            end_line,
            name_line: line,
            signature: String::new(),
            container: None,
            depth: 0,
        }
    }

    fn segment(files: &[(&str, &str, Vec<Definition>)]) -> Segment {
        let mut b = Builder::default();
        for (path, text, defs) in files {
            let docs = file_docs(text, defs, false);
            b.add(path.as_bytes(), (0, 0, 0), 0, FileState::Indexed, &docs);
        }
        b.finish()
    }

    fn ranked(seg: &Segment, query: &str) -> Vec<String> {
        let part = Part {
            seg,
            live: vec![true; seg.files().len()],
            files: vec![true; seg.files().len()],
            kinds: &[],
        };
        top(&[part], &parse_query(query), 10)
            .0
            .into_iter()
            .map(|s| {
                let d = &seg.docs()[s.doc as usize];
                format!(
                    "{}:{}",
                    String::from_utf8_lossy(seg.path(d.file)),
                    seg.name(d)
                )
            })
            .collect()
    }

    #[test]
    fn the_name_outweighs_the_body() {
        let seg = segment(&[
            (
                "a.c",
                "void timer_reset(void)\n{\n  hw();\n}\nvoid other(void)\n{\n  timer_reset();\n  reset();\n}\n",
                vec![def("timer_reset", 1, 4), def("other", 5, 9)],
            ),
            (
                "b.c",
                "void unrelated(void) { x(); }\n",
                vec![def("unrelated", 1, 1)],
            ),
        ]);
        assert_eq!(
            ranked(&seg, "the timer reset fires twice"),
            ["a.c:timer_reset", "a.c:other"]
        );
        assert!(ranked(&seg, "nothing matches this").is_empty());
    }

    #[test]
    fn a_definition_the_query_names_outranks_its_uses() {
        let calls = "def setup(app):\n".to_string()
            + &"    app.add_config_value('x', None, 'env', types=[str])\n".repeat(8);
        let seg = segment(&[
            ("ext.py", &calls, vec![def("setup", 1, 9)]),
            (
                "app.py",
                "def add_config_value(self, name, default, rebuild, types=()):\n    \
                 self.config.add(name, default, rebuild, types)\n",
                vec![def("add_config_value", 1, 2)],
            ),
        ]);
        assert_eq!(
            ranked(
                &seg,
                "Explain the types argument\n\nas add_config_value() takes it"
            ),
            ["app.py:add_config_value", "ext.py:setup"]
        );
    }

    #[test]
    fn the_subject_saying_a_name_lifts_it() {
        let calls = "  refresh(config);\n".repeat(6);
        let seg = segment(&[
            (
                "a.c",
                &format!("/* Refresh the config. */\nvoid reload_settings(void)\n{{\n{calls}}}\n"),
                vec![def("reload_settings", 2, 9)],
            ),
            (
                "b.c",
                "void refresh_config(void)\n{\n  reload();\n}\n",
                vec![def("refresh_config", 1, 4)],
            ),
        ]);
        assert_eq!(
            ranked(&seg, "config refresh twice"),
            ["b.c:refresh_config", "a.c:reload_settings"]
        );
        // Said only in a report's body, the name's parts lift nothing: the body's many
        // uses win, as they would without the rule.
        assert_eq!(
            ranked(&seg, "twice over\n\nconfig refresh"),
            ["a.c:reload_settings", "b.c:refresh_config"]
        );
    }

    #[test]
    fn a_path_hint_lifts_its_directory() {
        let text = "void start(void)\n{\n  go();\n}\n";
        let seg = segment(&[
            ("net/tcp.c", text, vec![def("start", 1, 4)]),
            ("fs/vfs.c", text, vec![def("start", 1, 4)]),
        ]);
        // A tie goes to path order.
        assert_eq!(
            ranked(&seg, "start go"),
            ["fs/vfs.c:start", "net/tcp.c:start"]
        );
        assert_eq!(
            ranked(&seg, "net/tcp: start go"),
            ["net/tcp.c:start", "fs/vfs.c:start"]
        );
    }

    #[test]
    fn filters_keep_files_and_kinds() {
        let seg = segment(&[
            ("a.c", "void go(void) { run(); }\n", vec![def("go", 1, 1)]),
            ("b.md", "run the thing\n", vec![]),
        ]);
        let query = parse_query("run");
        let only_b = Part {
            seg: &seg,
            live: vec![true, true],
            files: vec![false, true],
            kinds: &[],
        };
        let (hits, _) = top(&[only_b], &query, 10);
        assert_eq!(hits.len(), 1);
        assert_eq!(seg.docs()[hits[0].doc as usize].file, 1);
        let functions = [0u8];
        let only_functions = Part {
            seg: &seg,
            live: vec![true, true],
            files: vec![true, true],
            kinds: &functions,
        };
        let (hits, _) = top(&[only_functions], &query, 10);
        assert_eq!(hits.len(), 1);
        assert_eq!(seg.docs()[hits[0].doc as usize].file, 0);
    }
}
