//! One root's history as `search` reads it: the commits reachable from a HEAD (oldest
//! first, so a HEAD that moved on only appends), the files each changed, and an inverted
//! index of their messages' terms. A query's terms find the past commits whose messages are
//! most like it (BM25), and those vote for the files they changed, each vote the commit's
//! similarity decayed by its age (half-life a year before the newest commit) and shared
//! among its files — the signal bug localizers such as BugLocator add to plain retrieval.
//!
//! Stored as one varint stream (`encode`/`decode`); the decoder checks every length and
//! index, so a damaged payload is refused, never trusted.

use std::collections::HashMap;
use std::ops::Range;

use gix::ObjectId;

use super::read::{Commit, Paths};
use crate::ranked::terms::Term;
use crate::store::{Reader, put_blob, put_var};

/// Past commits whose messages vote, the most similar first.
pub(crate) const TOP_COMMITS: usize = 20;
/// A vote halves with every year between its commit and the newest one.
const HALF_LIFE_SECS: f64 = 365.0 * 86_400.0;
/// Layout version of the stored payload.
const VERSION: u64 = 1;

/// One commit of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CommitRec {
    pub(crate) id: ObjectId,
    pub(crate) time: i64,
    /// Terms in its message (BM25's document length).
    len: u32,
    /// Its files: `files[range]`.
    files: Range<u32>,
}

/// The history of one root up to `head`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Table {
    pub(crate) head: Option<ObjectId>,
    pub(crate) shallow: bool,
    pub(crate) paths: Paths,
    pub(crate) commits: Vec<CommitRec>,
    files: Vec<u32>,
    /// Each term of the messages, sorted, with where its list starts in `postings` and its
    /// length (the term's document frequency).
    terms: Vec<(Term, u32, u32)>,
    /// Every term's list of (commit, count), commits ascending, one after the other: flat
    /// arrays rather than a map of vectors, a third of the memory.
    postings: Vec<(u32, u16)>,
    total_len: u64,
}

/// A commit like the query, and how alike.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Similar {
    pub(crate) commit: u32,
    pub(crate) score: f32,
}

impl Table {
    /// Adds `newer` (newest first, as read) after the commits held, and makes `head` the
    /// table's HEAD.
    pub(crate) fn extend(&mut self, head: ObjectId, shallow: bool, newer: Vec<Commit>) {
        // The new commits' postings go after the old ones of each term: the lists are laid
        // out again (a HEAD that moved on costs one pass over them).
        let mut lists: HashMap<Term, Vec<(u32, u16)>> = HashMap::new();
        for commit in newer.into_iter().rev() {
            let at = self.commits.len() as u32;
            let start = self.files.len() as u32;
            self.files.extend_from_slice(&commit.files);
            let len: u32 = commit.terms.iter().map(|&(_, n)| u32::from(n)).sum();
            for (term, n) in commit.terms {
                lists.entry(term).or_default().push((at, n));
            }
            self.total_len += u64::from(len);
            self.commits.push(CommitRec {
                id: commit.id,
                time: commit.time,
                len,
                files: start..self.files.len() as u32,
            });
        }
        self.head = Some(head);
        self.shallow = shallow;
        if !lists.is_empty() {
            self.lay_out(lists);
        }
        self.paths.seal();
        self.commits.shrink_to_fit();
        self.files.shrink_to_fit();
    }

    /// Lays the postings out again with `added` after each term's old list.
    fn lay_out(&mut self, mut added: HashMap<Term, Vec<(u32, u16)>>) {
        let mut terms: Vec<Term> = (self.terms.iter().map(|t| t.0))
            .chain(added.keys().copied())
            .collect();
        terms.sort_unstable();
        terms.dedup();
        let old_postings = std::mem::take(&mut self.postings);
        let old_terms = std::mem::take(&mut self.terms);
        let mut old = old_terms.iter().peekable();
        let mut postings =
            Vec::with_capacity(old_postings.len() + added.values().map(Vec::len).sum::<usize>());
        let mut out = Vec::with_capacity(terms.len());
        for term in terms {
            let start = postings.len() as u32;
            if let Some(&&(t, at, n)) = old.peek()
                && t == term
            {
                postings.extend_from_slice(&old_postings[at as usize..(at + n) as usize]);
                old.next();
            }
            if let Some(list) = added.remove(&term) {
                postings.extend(list);
            }
            out.push((term, start, postings.len() as u32 - start));
        }
        self.terms = out;
        self.postings = postings;
    }

    /// The list of `term` (empty when no message holds it).
    fn postings_of(&self, term: Term) -> &[(u32, u16)] {
        match self.terms.binary_search_by_key(&term, |t| t.0) {
            Ok(i) => {
                let (_, at, n) = self.terms[i];
                &self.postings[at as usize..(at + n) as usize]
            }
            Err(_) => &[],
        }
    }

    /// The files `commit` changed (path ids).
    pub(crate) fn files_of(&self, commit: u32) -> &[u32] {
        let range = &self.commits[commit as usize].files;
        &self.files[range.start as usize..range.end as usize]
    }

    /// The [`TOP_COMMITS`] commits whose messages are most like `terms` (BM25, k1 1.2,
    /// b 0.75), each score decayed by the commit's age.
    pub(crate) fn similar(&self, terms: &[Term]) -> Vec<Similar> {
        let n = self.commits.len() as f32;
        if n == 0.0 {
            return Vec::new();
        }
        let avg = (self.total_len as f32 / n).max(1.0);
        let newest = self.commits.iter().map(|c| c.time).max().unwrap_or(0);
        let mut scores: HashMap<u32, f32> = HashMap::new();
        for term in terms {
            let list = self.postings_of(*term);
            if list.is_empty() {
                continue;
            }
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(commit, tf) in list {
                let len = self.commits[commit as usize].len as f32;
                let tf = f32::from(tf);
                let s = idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len / avg));
                *scores.entry(commit).or_default() += s;
            }
        }
        let mut out: Vec<Similar> = (scores.into_iter())
            .map(|(commit, score)| {
                let age = (newest - self.commits[commit as usize].time).max(0) as f64;
                let decay = 0.5f64.powf(age / HALF_LIFE_SECS) as f32;
                Similar {
                    commit,
                    score: score * decay,
                }
            })
            .collect();
        // Best first; ties to the newer commit, so the order is the same every time.
        out.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.commit.cmp(&a.commit)));
        out.truncate(TOP_COMMITS);
        out
    }

    /// Per file (path id) the votes of `similar`: each commit's score shared among its
    /// files (divided by the square root of their count).
    pub(crate) fn file_votes(&self, similar: &[Similar]) -> HashMap<u32, f32> {
        let mut votes: HashMap<u32, f32> = HashMap::new();
        for s in similar {
            let files = self.files_of(s.commit);
            if files.is_empty() {
                continue;
            }
            let share = s.score / (files.len() as f32).sqrt();
            for &file in files {
                *votes.entry(file).or_default() += share;
            }
        }
        votes
    }

    /// The table as a stored payload.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_var(&mut out, VERSION);
        let head = self.head.map_or([0u8; 20], |id| {
            let mut raw = [0u8; 20];
            raw.copy_from_slice(id.as_slice());
            raw
        });
        out.extend_from_slice(&head);
        out.push(u8::from(self.shallow));
        put_var(&mut out, self.paths.list.len() as u64);
        for path in &self.paths.list {
            put_blob(&mut out, path);
        }
        put_var(&mut out, self.commits.len() as u64);
        for c in &self.commits {
            out.extend_from_slice(c.id.as_slice());
            put_var(&mut out, zigzag(c.time));
            put_var(&mut out, u64::from(c.len));
            put_var(&mut out, u64::from(c.files.end - c.files.start));
            for &file in &self.files[c.files.start as usize..c.files.end as usize] {
                put_var(&mut out, u64::from(file));
            }
        }
        put_var(&mut out, self.terms.len() as u64);
        for &(term, _, _) in &self.terms {
            let list = self.postings_of(term);
            out.extend_from_slice(&term.to_le_bytes());
            put_var(&mut out, list.len() as u64);
            let mut last = 0u32;
            for &(commit, tf) in list {
                put_var(&mut out, u64::from(commit - last));
                put_var(&mut out, u64::from(tf));
                last = commit;
            }
        }
        out
    }

    /// A stored payload read back; `Err` names what did not decode.
    pub(crate) fn decode(bytes: &[u8]) -> Result<Table, String> {
        let b = &mut Reader::new(bytes);
        let bad = |what: &str| format!("history: bad {what}");
        if b.var().ok() != Some(VERSION) {
            return Err(bad("version"));
        }
        let head = b.take(20).map_err(|_| bad("head"))?;
        let head = ObjectId::try_from(head).map_err(|_| bad("head"))?;
        let head = (!head.is_null()).then_some(head);
        let shallow = b.take(1).map_err(|_| bad("flags"))?[0] != 0;
        let n_paths = count(b, usize::MAX).ok_or_else(|| bad("paths"))?;
        let mut list = Vec::with_capacity(n_paths.min(1 << 20));
        for _ in 0..n_paths {
            list.push(b.var_blob().map_err(|_| bad("path"))?.into());
        }
        let mut table = Table {
            head,
            shallow,
            paths: Paths::from_list(list),
            ..Table::default()
        };
        let n_commits = count(b, usize::MAX).ok_or_else(|| bad("commits"))?;
        for _ in 0..n_commits {
            table.decode_commit(b).ok_or_else(|| bad("commit"))?;
        }
        let n_terms = count(b, usize::MAX).ok_or_else(|| bad("terms"))?;
        let mut last_term = None;
        for _ in 0..n_terms {
            let term = b.u64().map_err(|_| bad("term"))?;
            // Sorted and distinct, as written: lookups search them.
            if last_term.is_some_and(|last| last >= term) {
                return Err(bad("term order"));
            }
            last_term = Some(term);
            let start = table.postings.len() as u32;
            let n = count(b, n_commits).ok_or_else(|| bad("postings"))?;
            let mut at = 0u64;
            for i in 0..n {
                let delta = b.var().map_err(|_| bad("posting"))?;
                at = at.checked_add(delta).ok_or_else(|| bad("posting"))?;
                let tf = b.var().ok().and_then(|t| u16::try_from(t).ok());
                let tf = tf.ok_or_else(|| bad("posting"))?;
                if at >= n_commits as u64 || (i > 0 && delta == 0) {
                    return Err(bad("posting"));
                }
                table.postings.push((at as u32, tf));
            }
            table.terms.push((term, start, n as u32));
        }
        if !b.is_done() {
            return Err(bad("end"));
        }
        table.postings.shrink_to_fit();
        table.files.shrink_to_fit();
        Ok(table)
    }

    fn decode_commit(&mut self, b: &mut Reader) -> Option<()> {
        let id = ObjectId::try_from(b.take(20).ok()?).ok()?;
        let time = unzigzag(b.var().ok()?);
        let len = u32::try_from(b.var().ok()?).ok()?;
        let n = count(b, usize::MAX)?;
        let start = self.files.len() as u32;
        for _ in 0..n {
            let file = u32::try_from(b.var().ok()?).ok()?;
            if file as usize >= self.paths.list.len() {
                return None;
            }
            self.files.push(file);
        }
        self.total_len += u64::from(len);
        self.commits.push(CommitRec {
            id,
            time,
            len,
            files: start..self.files.len() as u32,
        });
        Some(())
    }
}

/// A varint count no larger than `max` nor than the bytes left could hold (each item
/// takes at least one byte), so a damaged count cannot make the decoder allocate.
fn count(b: &mut Reader, max: usize) -> Option<usize> {
    b.var_count(1).ok().filter(|&n| n <= max)
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::read::message_terms;

    fn id(n: u8) -> ObjectId {
        ObjectId::try_from(&[n; 20][..]).expect("20 bytes")
    }

    /// Three commits, newest first as read: two about the parser, one about the network.
    fn table() -> Table {
        let mut paths = Paths::default();
        let parser = paths.id(b"src/parser.rs");
        let net = paths.id(b"src/net.rs");
        let docs = paths.id(b"README.md");
        let year = 365 * 86_400;
        let commits = vec![
            Commit {
                id: id(3),
                time: 3 * year,
                terms: message_terms(b"parser: crash on an empty header value"),
                files: vec![parser],
            },
            Commit {
                id: id(2),
                time: 2 * year,
                terms: message_terms(b"net: retry the socket when the peer resets"),
                files: vec![net, docs],
            },
            Commit {
                id: id(1),
                time: year,
                terms: message_terms(b"parser: header values may be quoted"),
                files: vec![parser, docs],
            },
        ];
        let mut table = Table {
            paths,
            ..Table::default()
        };
        table.extend(id(3), false, commits);
        table
    }

    fn terms(text: &str) -> Vec<Term> {
        message_terms(text.as_bytes())
            .into_iter()
            .map(|(t, _)| t)
            .collect()
    }

    #[test]
    fn similar_commits_vote_for_the_files_they_changed_newer_ones_more() {
        let table = table();
        assert_eq!(table.commits.len(), 3);
        assert_eq!(table.commits[0].id, id(1), "oldest first");
        let similar = table.similar(&terms("empty header value crashes the parser"));
        assert_eq!(similar.len(), 2, "the network commit shares no word");
        assert_eq!(
            similar[0].commit, 2,
            "the newest parser commit is the most alike"
        );
        let votes = table.file_votes(&similar);
        let parser = votes[&0];
        let docs = votes[&2];
        assert!(parser > docs, "{parser} vs {docs}");
        assert!(!votes.contains_key(&1), "the network file has no vote");
        assert!(table.similar(&terms("nothing alike")).is_empty());
    }

    #[test]
    fn a_stored_table_reads_back_the_same_and_a_damaged_one_is_refused() {
        let table = table();
        let bytes = table.encode();
        let back = Table::decode(&bytes).expect("decodes");
        assert_eq!(back.head, table.head);
        assert_eq!(back.commits, table.commits);
        assert_eq!(back.paths.list, table.paths.list);
        let query = terms("header value parser");
        assert_eq!(back.similar(&query), table.similar(&query));
        for cut in [0, 1, 21, bytes.len() / 2, bytes.len() - 1] {
            assert!(Table::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(Table::decode(&longer).is_err(), "trailing bytes");
        // A file id past the paths, and a posting past the commits.
        let mut wrong = bytes.clone();
        let at = wrong.len() - 3;
        wrong[at] = 0x7f;
        let _ = Table::decode(&wrong); // may or may not decode; must not panic
    }

    #[test]
    fn extending_a_table_appends_what_head_gained() {
        let mut table = table();
        let before = table.commits.len();
        let newer = vec![Commit {
            id: id(4),
            time: 4 * 365 * 86_400,
            terms: message_terms(b"parser: empty header again"),
            files: vec![0],
        }];
        table.extend(id(4), false, newer);
        assert_eq!(table.commits.len(), before + 1);
        assert_eq!(table.head, Some(id(4)));
        let similar = table.similar(&terms("empty header"));
        assert_eq!(similar[0].commit, 3, "the new commit, newest and alike");
        assert_eq!(table.files_of(3), &[0]);
    }
}
