//! Ranking: BM25F over the documents of one or more segments, with the weights and
//! rules the ranking benchmark chose (`bench/results/rank-proto/DECISIONS.md`;
//! ARCHITECTURE.md says what each measured).
//!
//! For a document d and a query term t, the fields' counts are summed after each is
//! normalised by its own length: tf~ = Σ_f w_f · tf_f / (1 − b_f + b_f · len_f / avglen_f);
//! the term weighs idf(t) · tf~ · (k1 + 1) / (k1 + tf~), times the query term's own weight
//! (2 for a code-like word's whole token). A query's `subsystem:` prefix then multiplies a
//! document's score by 1 + 0.5 · (share of its segments found in the document's path).
//! Statistics (document count, df, average lengths) are taken over every segment scored
//! together, so roots and a base with its update score on one scale.

use std::collections::HashMap;

use super::docs::FIELDS;
use super::segment::Segment;
use super::terms::{Query, hint_set};

pub(crate) const K1: f32 = 1.2;
/// Field weights: name, container, comment, body; then the path.
pub(crate) const WEIGHTS: [f32; FIELDS] = [3.0, 2.0, 1.5, 1.0];
pub(crate) const PATH_WEIGHT: f32 = 1.5;
/// Length normalisation per field, then the path's.
pub(crate) const B: [f32; FIELDS] = [0.5, 0.5, 0.75, 0.75];
pub(crate) const PATH_B: f32 = 0.5;
/// How much a path hint can raise a score.
pub(crate) const HINT_BETA: f32 = 0.5;

/// One segment as a query scores it: which of its files count (in the targets, not
/// replaced by a newer segment, of a wanted language) and which document kinds.
pub(crate) struct Part<'a> {
    pub(crate) seg: &'a Segment,
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
        docs += p.seg.docs.len() as u64;
        for (t, s) in totals.iter_mut().zip(p.seg.totals) {
            *t += s;
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

/// The best `want` documents of the parts for `query`, best first (ties go to the earlier
/// part, then the lower document number: path order within a segment), and how many
/// documents scored at all.
pub(crate) fn top(parts: &[Part], query: &Query, want: usize) -> (Vec<Scored>, usize) {
    let stats = stats(parts);
    let mut found: Vec<Scored> = Vec::new();
    for (at, part) in parts.iter().enumerate() {
        let scores = score_part(parts, part, query, &stats);
        found.extend(
            scores
                .into_iter()
                .filter(|(_, s)| *s > 0.0)
                .map(|(doc, score)| Scored { part: at, doc, score }),
        );
    }
    let total = found.len();
    let order = |a: &Scored, b: &Scored| {
        b.score
            .total_cmp(&a.score)
            .then(a.part.cmp(&b.part))
            .then(a.doc.cmp(&b.doc))
    };
    if found.len() > want && want > 0 {
        found.select_nth_unstable_by(want - 1, order);
        found.truncate(want);
    }
    found.sort_by(order);
    found.truncate(want);
    (found, total)
}

/// Scores of one part's wanted documents that hold a query term, unordered.
fn score_part(parts: &[Part], part: &Part, query: &Query, stats: &Stats) -> Vec<(u32, f32)> {
    let seg = part.seg;
    let n = seg.docs.len();
    let mut score = vec![0f32; n];
    let mut tfw = vec![0f32; n];
    let mut touched: Vec<u32> = Vec::new();
    let mut this_term: Vec<u32> = Vec::new();
    let wanted = |doc: u32| {
        let d = &seg.docs[doc as usize];
        part.files.get(d.file as usize).copied().unwrap_or(false)
            && (part.kinds.is_empty() || part.kinds.contains(&d.kind))
    };
    let norm = |f: usize, len: u16| 1.0 - B[f] + B[f] * f32::from(len) / stats.avg[f];
    for qt in &query.terms {
        let df: u32 = parts.iter().map(|p| p.seg.df(qt.term)).sum();
        if df == 0 {
            continue;
        }
        let idf = idf(stats.docs, df as f32);
        seg.postings(qt.term, |p| {
            if !wanted(p.doc) {
                return;
            }
            let d = &seg.docs[p.doc as usize];
            let mut sum = 0.0;
            for f in 0..FIELDS {
                if p.tf[f] > 0 {
                    sum += WEIGHTS[f] * p.tf[f] as f32 / norm(f, d.lens[f]);
                }
            }
            if tfw[p.doc as usize] == 0.0 {
                this_term.push(p.doc);
            }
            tfw[p.doc as usize] += sum;
        });
        seg.path_postings(qt.term, |file, tf| {
            let f = &seg.files[file as usize];
            if !part.files.get(file as usize).copied().unwrap_or(false) {
                return;
            }
            let add = PATH_WEIGHT * tf as f32
                / (1.0 - PATH_B + PATH_B * f32::from(f.path_len) / stats.avg[FIELDS]);
            for doc in f.first..f.first + f.count {
                if !wanted(doc) {
                    continue;
                }
                if tfw[doc as usize] == 0.0 {
                    this_term.push(doc);
                }
                tfw[doc as usize] += add;
            }
        });
        for doc in this_term.drain(..) {
            let t = std::mem::take(&mut tfw[doc as usize]);
            if score[doc as usize] == 0.0 {
                touched.push(doc);
            }
            score[doc as usize] += qt.weight * idf * t * (K1 + 1.0) / (K1 + t);
        }
    }
    if !query.hint.is_empty() {
        let mut by_file: HashMap<u32, f32> = HashMap::new();
        for &doc in &touched {
            let file = seg.docs[doc as usize].file;
            let factor = *by_file.entry(file).or_insert_with(|| {
                let set = hint_set(&String::from_utf8_lossy(seg.path(file)));
                let hits = query.hint.iter().filter(|h| set.contains(h)).count();
                1.0 + HINT_BETA * hits as f32 / query.hint.len() as f32
            });
            score[doc as usize] *= factor;
        }
    }
    touched.into_iter().map(|doc| (doc, score[doc as usize])).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranked::docs::file_docs;
    use crate::ranked::segment::{Builder, FileState};
    use crate::ranked::terms::parse_query;
    use crate::symbols::Definition;

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
            files: vec![true; seg.files.len()],
            kinds: &[],
        };
        top(&[part], &parse_query(query), 10)
            .0
            .into_iter()
            .map(|s| {
                let d = &seg.docs[s.doc as usize];
                format!("{}:{}", String::from_utf8_lossy(seg.path(d.file)), seg.name(d))
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
            ("b.c", "void unrelated(void) { x(); }\n", vec![def("unrelated", 1, 1)]),
        ]);
        assert_eq!(ranked(&seg, "the timer reset fires twice"), ["a.c:timer_reset", "a.c:other"]);
        assert!(ranked(&seg, "nothing matches this").is_empty());
    }

    #[test]
    fn a_path_hint_lifts_its_directory() {
        let text = "void start(void)\n{\n  go();\n}\n";
        let seg = segment(&[
            ("net/tcp.c", text, vec![def("start", 1, 4)]),
            ("fs/vfs.c", text, vec![def("start", 1, 4)]),
        ]);
        assert_eq!(ranked(&seg, "start go"), ["net/tcp.c:start", "fs/vfs.c:start"]);
        assert_eq!(ranked(&seg, "fs/vfs: start go"), ["fs/vfs.c:start", "net/tcp.c:start"]);
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
            files: vec![false, true],
            kinds: &[],
        };
        let (hits, _) = top(&[only_b], &query, 10);
        assert_eq!(hits.len(), 1);
        assert_eq!(seg.docs[hits[0].doc as usize].file, 1);
        let functions = [0u8];
        let only_functions = Part {
            seg: &seg,
            files: vec![true, true],
            kinds: &functions,
        };
        let (hits, _) = top(&[only_functions], &query, 10);
        assert_eq!(hits.len(), 1);
        assert_eq!(seg.docs[hits[0].doc as usize].file, 0);
    }
}
