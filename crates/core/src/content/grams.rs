//! Trigrams, both ways: the distinct trigrams of a file's bytes (ASCII letters folded to
//! lowercase, so one index serves case-sensitive and case-insensitive patterns), and the
//! [`Plan`] of a pattern: a condition on trigrams that every text the pattern can match
//! satisfies. A file whose trigrams fail the plan cannot hold a match, so `grep` need not
//! read it; everything the analysis cannot see through (a class of many characters, an
//! optional part, a repetition) only weakens the plan, down to [`Plan::All`] (read every
//! file), never into excluding a file that matches.
//!
//! The pattern is parsed with `regex-syntax` (the parser `grep` itself compiles with), and
//! its tree is walked the way Russ Cox's codesearch does: each part yields either the
//! small set of exact strings it matches, or a plan; a concatenation joins exact sets
//! while they stay small, an alternation takes the union or the disjunction.

use regex_syntax::hir::{Class, Hir, HirKind};

/// Three bytes, folded, as `b0 << 16 | b1 << 8 | b2`.
pub(crate) type Gram = u32;

/// Exact strings kept for one part of a pattern before it becomes a plan.
const MAX_EXACT: usize = 16;
/// Characters a class may hold and still count as a choice of exact strings.
const MAX_CLASS_CHARS: u32 = 8;
/// Trigrams one exact string contributes to a plan (spread over it): more only cost
/// lookups.
const MAX_STRING_GRAMS: usize = 12;

/// A condition on the trigrams of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Any file may match.
    All,
    Gram(Gram),
    And(Vec<Plan>),
    Or(Vec<Plan>),
}

impl Plan {
    fn and(self, other: Plan) -> Plan {
        match (self, other) {
            (Plan::All, p) | (p, Plan::All) => p,
            (Plan::And(mut a), Plan::And(b)) => {
                a.extend(b);
                Plan::And(a)
            }
            (Plan::And(mut a), p) | (p, Plan::And(mut a)) => {
                a.push(p);
                Plan::And(a)
            }
            (a, b) => Plan::And(vec![a, b]),
        }
    }

    fn or(plans: Vec<Plan>) -> Plan {
        if plans.contains(&Plan::All) || plans.is_empty() {
            return Plan::All;
        }
        let mut plans = plans;
        plans.dedup();
        match plans.len() {
            1 => plans.pop().unwrap_or(Plan::All),
            _ => Plan::Or(plans),
        }
    }

    /// Whether a file with the trigrams `has` may match.
    #[cfg(test)]
    pub(crate) fn admits(&self, has: &dyn Fn(Gram) -> bool) -> bool {
        match self {
            Plan::All => true,
            Plan::Gram(g) => has(*g),
            Plan::And(ps) => ps.iter().all(|p| p.admits(has)),
            Plan::Or(ps) => ps.iter().any(|p| p.admits(has)),
        }
    }
}

/// How the index folds a byte.
fn fold(b: u8) -> u8 {
    b.to_ascii_lowercase()
}

fn gram(a: u8, b: u8, c: u8) -> Gram {
    u32::from(fold(a)) << 16 | u32::from(fold(b)) << 8 | u32::from(fold(c))
}

/// The distinct trigrams of texts, one text at a time, with a reusable 2 MiB bit set (one
/// bit per possible trigram).
pub(crate) struct GramSet {
    seen: Vec<u64>,
    grams: Vec<Gram>,
}

impl GramSet {
    pub(crate) fn new() -> GramSet {
        GramSet {
            seen: vec![0; (1 << 24) / 64],
            grams: Vec::new(),
        }
    }

    /// The distinct trigrams of `text`, in the order first met.
    pub(crate) fn of(&mut self, text: &[u8]) -> &[Gram] {
        for g in self.grams.drain(..) {
            self.seen[g as usize / 64] = 0;
        }
        let mut key = 0u32;
        for (i, &b) in text.iter().enumerate() {
            key = (key << 8 | u32::from(fold(b))) & 0xff_ffff;
            if i < 2 {
                continue;
            }
            let (word, bit) = (key as usize / 64, 1u64 << (key % 64));
            if self.seen[word] & bit == 0 {
                self.seen[word] |= bit;
                self.grams.push(key);
            }
        }
        &self.grams
    }
}

/// What a pattern requires. `case_insensitive`: as `grep` compiles it (smart case counts
/// as insensitive: the plan is then only weaker); `fixed`: the pattern is a literal.
/// A pattern this parser refuses gets [`Plan::All`].
pub(crate) fn plan(pattern: &str, case_insensitive: bool, fixed: bool) -> Plan {
    let escaped;
    let pattern = if fixed {
        escaped = regex_syntax::escape(pattern);
        &escaped
    } else {
        pattern
    };
    let hir = regex_syntax::ParserBuilder::new()
        .case_insensitive(case_insensitive)
        .multi_line(true)
        .build()
        .parse(pattern);
    match hir {
        Ok(hir) => info(&hir).into_plan(),
        Err(_) => Plan::All,
    }
}

/// What one part of a pattern tells: the exact strings it matches (folded), when few, and
/// what its matches require besides.
struct Info {
    exact: Option<Vec<Vec<u8>>>,
    plan: Plan,
}

impl Info {
    fn exact(strings: Vec<Vec<u8>>) -> Info {
        Info {
            exact: Some(strings),
            plan: Plan::All,
        }
    }

    fn any() -> Info {
        Info {
            exact: None,
            plan: Plan::All,
        }
    }

    fn into_plan(self) -> Plan {
        match self.exact {
            Some(strings) => self.plan.and(strings_plan(&strings)),
            None => self.plan,
        }
    }
}

fn info(hir: &Hir) -> Info {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::exact(vec![Vec::new()]),
        HirKind::Literal(lit) => Info::exact(vec![lit.0.iter().map(|&b| fold(b)).collect()]),
        HirKind::Class(class) => class_strings(class).map_or_else(Info::any, Info::exact),
        HirKind::Capture(capture) => info(&capture.sub),
        HirKind::Repetition(rep) if rep.min == 0 => Info::any(),
        HirKind::Repetition(rep) if rep.min == 1 && rep.max == Some(1) => info(&rep.sub),
        HirKind::Repetition(rep) => Info {
            exact: None,
            plan: info(&rep.sub).into_plan(),
        },
        HirKind::Concat(parts) => concat(parts),
        HirKind::Alternation(parts) => alternation(parts),
    }
}

fn concat(parts: &[Hir]) -> Info {
    let mut plan = Plan::All;
    // The exact strings of the run of parts since the last one that had none.
    let mut run: Option<Vec<Vec<u8>>> = Some(vec![Vec::new()]);
    let mut whole = true;
    for part in parts {
        let part = info(part);
        plan = plan.and(part.plan);
        match part.exact {
            Some(set) => {
                let current = run.take().unwrap_or_else(|| vec![Vec::new()]);
                if current.len() * set.len() > MAX_EXACT {
                    // Too many combinations: what the run required so far stands alone.
                    plan = plan.and(strings_plan(&current));
                    whole = false;
                    run = Some(set);
                } else {
                    run = Some(cross(&current, &set));
                }
            }
            None => {
                if let Some(current) = run.take() {
                    plan = plan.and(strings_plan(&current));
                }
                whole = false;
            }
        }
    }
    match run {
        Some(strings) if whole => Info {
            exact: Some(strings),
            plan,
        },
        Some(strings) => Info {
            exact: None,
            plan: plan.and(strings_plan(&strings)),
        },
        None => Info { exact: None, plan },
    }
}

fn alternation(parts: &[Hir]) -> Info {
    let infos: Vec<Info> = parts.iter().map(info).collect();
    let all_exact = infos
        .iter()
        .all(|i| i.exact.is_some() && i.plan == Plan::All);
    if all_exact {
        let mut strings: Vec<Vec<u8>> = infos
            .iter()
            .flat_map(|i| i.exact.clone())
            .flatten()
            .collect();
        strings.sort();
        strings.dedup();
        if strings.len() <= MAX_EXACT {
            return Info::exact(strings);
        }
    }
    Info {
        exact: None,
        plan: Plan::or(infos.into_iter().map(Info::into_plan).collect()),
    }
}

fn cross(left: &[Vec<u8>], right: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(left.len() * right.len());
    for l in left {
        for r in right {
            let mut s = l.clone();
            s.extend_from_slice(r);
            out.push(s);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The strings a small class matches, folded (`None` when it holds many characters).
fn class_strings(class: &Class) -> Option<Vec<Vec<u8>>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut count = 0u32;
    match class {
        Class::Unicode(c) => {
            for range in c.ranges() {
                count += u32::from(range.end()) - u32::from(range.start()) + 1;
                if count > MAX_CLASS_CHARS {
                    return None;
                }
                for ch in range.start()..=range.end() {
                    let mut buf = [0u8; 4];
                    out.push(ch.encode_utf8(&mut buf).bytes().map(fold).collect());
                }
            }
        }
        Class::Bytes(c) => {
            for range in c.ranges() {
                count += u32::from(range.end()) - u32::from(range.start()) + 1;
                if count > MAX_CLASS_CHARS {
                    return None;
                }
                out.extend((range.start()..=range.end()).map(|b| vec![fold(b)]));
            }
        }
    }
    out.sort();
    out.dedup();
    (!out.is_empty()).then_some(out)
}

/// Every string of `strings` is a possible match: a file must hold all the trigrams of at
/// least one of them (a string shorter than three bytes requires nothing).
fn strings_plan(strings: &[Vec<u8>]) -> Plan {
    let mut alternatives = Vec::with_capacity(strings.len());
    for s in strings {
        if s.len() < 3 {
            return Plan::All;
        }
        let grams: Vec<Gram> = s.windows(3).map(|w| gram(w[0], w[1], w[2])).collect();
        let mut picked: Vec<Gram> = if grams.len() <= MAX_STRING_GRAMS {
            grams
        } else {
            let last = grams.len() - 1;
            (0..MAX_STRING_GRAMS)
                .map(|k| grams[k * last / (MAX_STRING_GRAMS - 1)])
                .collect()
        };
        picked.sort_unstable();
        picked.dedup();
        let all = picked
            .into_iter()
            .map(Plan::Gram)
            .fold(Plan::All, Plan::and);
        alternatives.push(all);
    }
    Plan::or(alternatives)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(s: &str) -> Plan {
        let b = s.as_bytes();
        Plan::Gram(gram(b[0], b[1], b[2]))
    }

    fn grams_of(text: &str) -> Vec<Gram> {
        GramSet::new().of(text.as_bytes()).to_vec()
    }

    #[test]
    fn a_text_yields_each_folded_trigram_once() {
        let mut set = GramSet::new();
        assert_eq!(set.of(b"abcABC").len(), 3);
        assert_eq!(set.of(b"ab"), &[] as &[Gram]);
        // The set is emptied between texts.
        assert_eq!(
            set.of(b"xyzxyz"),
            &[
                gram(b'x', b'y', b'z'),
                gram(b'y', b'z', b'x'),
                gram(b'z', b'x', b'y')
            ]
        );
    }

    #[test]
    fn literals_require_their_trigrams_folded() {
        assert_eq!(
            plan("Abcd", false, false),
            Plan::And(vec![g("abc"), g("bcd")])
        );
        assert_eq!(plan("ab", false, false), Plan::All);
        assert_eq!(plan("a.c", true, true), g("a.c"));
        assert_eq!(plan("a.c", false, false), Plan::All);
    }

    #[test]
    fn optional_and_repeated_parts_weaken_the_plan_only() {
        assert_eq!(plan("foo(bar)?", false, false), g("foo"));
        assert_eq!(plan("(foo)+x", false, false), g("foo"));
        assert_eq!(
            plan(r"\w+_handler", false, false),
            plan("_handler", false, false)
        );
        assert_eq!(plan(".*", false, false), Plan::All);
        assert_eq!(plan("foo|ba", false, false), Plan::All);
        assert_eq!(
            plan("foo|bar", false, false),
            Plan::Or(vec![g("bar"), g("foo")])
        );
        assert_eq!(plan("(", false, false), Plan::All);
    }

    #[test]
    fn small_classes_and_case_insensitivity_keep_the_trigrams() {
        assert_eq!(plan("(?i)abc", false, false), g("abc"));
        assert_eq!(plan("abc", true, false), g("abc"));
        assert_eq!(plan("ab[cC]", false, false), g("abc"));
        assert_eq!(
            plan("ab[cd]", false, false),
            Plan::Or(vec![g("abc"), g("abd")])
        );
        // `k` also matches the Kelvin sign: two spellings, both required alternatives.
        let kelvin = plan("kab", true, false);
        assert!(matches!(kelvin, Plan::Or(_)), "{kelvin:?}");
    }

    /// Every match of a pattern satisfies its plan: texts built to match, checked against
    /// the plan with the text's own trigrams.
    #[test]
    fn a_matching_text_always_satisfies_the_plan() {
        let cases: &[(&str, bool, &[&str])] = &[
            ("fn\\s+main", false, &["fn  main", "fn\tmain()"]),
            ("(?i)HeLLo wor[lL]d", false, &["hello world", "HELLO WORLD"]),
            ("colou?r_value", false, &["color_value", "colour_value"]),
            ("a(bc|de)fg", false, &["abcfg", "adefg"]),
            ("x{3}yz", false, &["xxxyz"]),
            ("ψυχή", true, &["ΨΥΧΉ", "ψυχή"]),
            ("kelvin", true, &["\u{212A}ELVIN", "KELVIN"]),
            ("straße", true, &["STRASSE straße"]),
            (
                "^\\s*#include <(std|sys)io\\.h>$",
                false,
                &["  #include <stdio.h>"],
            ),
            ("\\bword\\b", false, &["a word here"]),
        ];
        for (pattern, ci, texts) in cases {
            let plan = plan(pattern, *ci, false);
            let re = regex::RegexBuilder::new(pattern)
                .case_insensitive(*ci)
                .multi_line(true)
                .build()
                .unwrap();
            for text in *texts {
                if !re.is_match(text) {
                    continue;
                }
                let has = grams_of(text);
                assert!(
                    plan.admits(&|g| has.contains(&g)),
                    "{pattern} on {text}: {plan:?}"
                );
            }
        }
    }

    proptest::proptest! {
        /// Any pattern over a small alphabet, any text: when the pattern matches the text
        /// (as `grep` would compile it), the text's trigrams satisfy the plan.
        #[test]
        fn no_match_is_ever_ruled_out(
            pattern in "[abAB_|()?*+.\\[\\]{}1-3]{1,14}",
            text in "[abAB_ \n]{0,40}",
            insensitive in proptest::bool::ANY,
            fixed in proptest::bool::ANY,
        ) {
            let source = if fixed { regex::escape(&pattern) } else { pattern.clone() };
            let Ok(re) = regex::RegexBuilder::new(&source)
                .case_insensitive(insensitive)
                .multi_line(true)
                .build()
            else {
                return Ok(());
            };
            if re.is_match(&text) {
                let plan = plan(&pattern, insensitive, fixed);
                let has = grams_of(&text);
                proptest::prop_assert!(plan.admits(&|g| has.contains(&g)), "{:?}", plan);
            }
        }
    }
}
