//! `rootgrep doctor`'s report: [`Finding`]s (fine, worth knowing, or a problem with its
//! fix) in titled sections, rendered as text for the terminal, and how many problems there
//! are (the exit status).

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    /// Checked and fine.
    Ok,
    /// Worth knowing; nothing to fix.
    Note,
    /// Something that stops rootgrep from working as it should: the exit status is 1.
    Problem,
}

/// One line of the report, and for a problem, what fixes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub level: Level,
    pub text: String,
    pub fix: Option<String>,
}

impl Finding {
    pub fn ok(text: impl Into<String>) -> Finding {
        Finding {
            level: Level::Ok,
            text: text.into(),
            fix: None,
        }
    }

    pub fn note(text: impl Into<String>) -> Finding {
        Finding {
            level: Level::Note,
            text: text.into(),
            fix: None,
        }
    }

    pub fn problem(text: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding {
            level: Level::Problem,
            text: text.into(),
            fix: Some(fix.into()),
        }
    }

    /// A note that still says what to do (not a problem: rootgrep works as it is).
    pub fn advice(text: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding {
            fix: Some(fix.into()),
            ..Finding::note(text)
        }
    }
}

/// The report: a heading line, then titled sections of findings.
#[derive(Debug, Default)]
pub(crate) struct Report {
    pub heading: Vec<String>,
    pub sections: Vec<(&'static str, Vec<Finding>)>,
}

impl Report {
    pub fn problems(&self) -> usize {
        self.sections
            .iter()
            .flat_map(|(_, findings)| findings)
            .filter(|finding| finding.level == Level::Problem)
            .count()
    }

    /// The report as text: each finding on its own line behind its level, a fix on the
    /// next, then a count of problems.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for line in &self.heading {
            out.push_str(line);
            out.push('\n');
        }
        for (title, findings) in &self.sections {
            out.push('\n');
            out.push_str(title);
            out.push('\n');
            for finding in findings {
                let label = match finding.level {
                    Level::Ok => "ok",
                    Level::Note => "note",
                    Level::Problem => "PROBLEM",
                };
                out.push_str(&format!("  {label:<8} {}\n", finding.text));
                if let Some(fix) = &finding.fix {
                    out.push_str(&format!("  {:<8} fix: {fix}\n", ""));
                }
            }
        }
        out.push('\n');
        out.push_str(&match self.problems() {
            0 => "No problem found.\n".to_string(),
            1 => "1 problem found: its fix is under it.\n".to_string(),
            n => format!("{n} problems found: each one's fix is under it.\n"),
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_lists_levels_fixes_and_the_count() {
        let report = Report {
            heading: vec!["rootgrep 0.1.0 (commit abc)".to_string()],
            sections: vec![
                ("roots", vec![Finding::ok("/p: a directory")]),
                (
                    "cache",
                    vec![
                        Finding::problem("/c cannot be written", "pass --cache-dir DIR"),
                        Finding::advice("2 entries describe no root", "rootgrep cache clear"),
                    ],
                ),
            ],
        };
        assert_eq!(report.problems(), 1);
        let text = report.render();
        assert!(
            text.starts_with("rootgrep 0.1.0 (commit abc)\n\nroots\n"),
            "{text}"
        );
        assert!(text.contains("  ok       /p: a directory\n"), "{text}");
        assert!(
            text.contains(
                "  PROBLEM  /c cannot be written\n           fix: pass --cache-dir DIR\n"
            ),
            "{text}"
        );
        assert!(text.contains("  note     2 entries"), "{text}");
        assert!(
            text.ends_with("1 problem found: its fix is under it.\n"),
            "{text}"
        );
        assert!(Report::default().render().ends_with("No problem found.\n"));
    }
}
