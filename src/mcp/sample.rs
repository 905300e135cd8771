//! Asking the host's model (`sampling/createMessage`) to turn a `search` question in prose
//! into the code terms to look for: only when the call asks (`expand: true`) or the operator
//! set `--expand`, only when the client declared `sampling`, with a timeout, and never at
//! the cost of an answer: a host that refuses, fails, stays silent or says nothing usable
//! leaves the plain query, and the answer says why.
//!
//! What comes back is the host's model's text, so it is read as words only: the
//! identifier-like tokens of its first [`REPLY_READ_BYTES`], at most [`MAX_TERMS`] of them,
//! each at most [`MAX_TERM_CHARS`] characters, none the query already holds. They are
//! added to the query as words; they cannot name a path, a filter or a tool.
//!
//! Like `elicitation/create`, the request goes through `crate::mcp::ask::ask_client`: it has
//! a timeout, is cancelled on the wire (`notifications/cancelled`) when abandoned, and a
//! client that never answers can never hang the call. A 2026-07-28 request carries no session to ask on; it is answered
//! from the plain query (see DECISIONS.md, "Sampling").

#![allow(deprecated)] // Sampling is deprecated by SEP-2577 but is what today's hosts offer.

use rmcp::RoleServer;
use rmcp::model::{
    ContextInclusion, CreateMessageRequestParams, ModelPreferences, Request, SamplingMessage,
    SamplingMessageContentBlock, ServerRequest,
};
use rmcp::service::RequestContext;

use crate::mcp::ask::{Waited, ask_client};
use crate::mcp::session::Session;
use rootgrep_core::quote::echo;

/// Code terms added to a query at most.
pub const MAX_TERMS: usize = 16;
/// Longest term kept (a longer token is not a name).
pub const MAX_TERM_CHARS: usize = 64;
/// Bytes of the model's reply read.
const REPLY_READ_BYTES: usize = 2048;
/// Bytes of the question sent (a pasted log is cut: the host's model needs the gist).
const QUESTION_SENT_BYTES: usize = 4096;
/// Tokens the host's model may answer with.
const MAX_TOKENS: u32 = 120;

const SYSTEM_PROMPT: &str = "You help a code search engine. Given a question about a \
codebase (a bug report, an error, a question in words), answer only with the code terms \
most likely to appear in the code that answers it: function, method, type, variable, \
constant and file names in the usual styles of code (snake_case, camelCase, CamelCase, \
UPPER_CASE), and words of error messages. At most 12 terms, separated by spaces. No prose, \
no explanation, no code blocks.";

/// What asking the host's model gave.
#[derive(Debug)]
pub enum Expansion {
    /// Not asked for (neither `expand` nor `--expand`).
    NotAsked,
    /// Terms to add, and the model that gave them.
    Terms { terms: Vec<String>, model: String },
    /// Asked for but not done: why, for the answer's notes.
    Plain(String),
    /// The tool call was cancelled while the host's model was asked.
    Cancelled,
}

impl Expansion {
    /// The note the answer carries, if any.
    pub fn note(&self) -> Option<String> {
        match self {
            Expansion::Terms { terms, model } => Some(format!(
                "expanded by the host's model ({}) with: {}",
                echo(model),
                terms.join(" ")
            )),
            Expansion::Plain(why) => {
                Some(format!("not expanded: {why}; searched the query as given"))
            }
            Expansion::NotAsked | Expansion::Cancelled => None,
        }
    }

    /// The query to rank: the question, and the added terms on a line of their own (so a
    /// `subsystem:` prefix of the first line still reads as one).
    pub fn query(&self, query: &str) -> String {
        match self {
            Expansion::Terms { terms, .. } => format!("{query}\n{}", terms.join(" ")),
            _ => query.to_string(),
        }
    }
}

/// Asks the host's model for code terms when `asked` (the call's `expand`, else the
/// operator's `--expand`). `modern`: a 2026-07-28 request (no session to ask on).
pub async fn expand(
    session: &Session,
    ctx: &RequestContext<RoleServer>,
    modern: bool,
    asked: bool,
    query: &str,
) -> Expansion {
    if !asked {
        return Expansion::NotAsked;
    }
    if modern {
        return Expansion::Plain("sampling is not offered on 2026-07-28 requests".to_string());
    }
    let can_sample = ctx
        .peer
        .peer_info()
        .is_some_and(|info| info.capabilities.sampling.is_some());
    if !can_sample {
        return Expansion::Plain("this client did not declare sampling".to_string());
    }
    let question = rootgrep_core::quote::cut(query, QUESTION_SENT_BYTES).into_owned();
    let params =
        CreateMessageRequestParams::new(vec![SamplingMessage::user_text(question)], MAX_TOKENS)
            .with_system_prompt(SYSTEM_PROMPT)
            .with_include_context(ContextInclusion::None)
            .with_temperature(0.0)
            .with_model_preferences(
                ModelPreferences::new()
                    .with_speed_priority(0.9)
                    .with_cost_priority(0.8)
                    .with_intelligence_priority(0.3),
            );
    let request = ServerRequest::CreateMessageRequest(Request::new(params));
    let timeout = session.config.expand_timeout;
    let outcome = match ask_client(ctx, request, timeout, "no answer in time").await {
        Err(err) => {
            let why = format!("could not ask the host's model: {}", echo(&err.to_string()));
            return Expansion::Plain(why);
        }
        Ok(Waited::Answered(outcome)) => outcome,
        Ok(Waited::TimedOut) => {
            let secs = timeout.as_secs_f64();
            return Expansion::Plain(format!("no answer from the host's model within {secs}s"));
        }
        Ok(Waited::Cancelled) => return Expansion::Cancelled,
    };
    match outcome {
        Some(Ok(rmcp::model::ClientResult::CreateMessageResult(result))) => {
            let text: String = result
                .message
                .content
                .into_vec()
                .into_iter()
                .filter_map(|block| match block {
                    SamplingMessageContentBlock::Text(text) => Some(text.text),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(" ");
            let terms = terms_of(&text, query);
            match terms.is_empty() {
                true => Expansion::Plain("the host's model gave no code terms".to_string()),
                false => Expansion::Terms {
                    terms,
                    model: rootgrep_core::quote::cut(&result.model, 80).into_owned(),
                },
            }
        }
        Some(Ok(_)) => {
            Expansion::Plain("the host answered something else than a message".to_string())
        }
        Some(Err(err)) => Expansion::Plain(format!(
            "the host refused or failed ({})",
            echo(&err.to_string())
        )),
        None => Expansion::Plain("the connection closed while asking the host's model".to_string()),
    }
}

/// The identifier-like tokens of the reply's first [`REPLY_READ_BYTES`] (a letter or `_`,
/// then letters, digits, `_`; 2 to [`MAX_TERM_CHARS`] characters), de-duplicated without
/// regard to case, leaving out those the query holds; at most [`MAX_TERMS`].
pub fn terms_of(reply: &str, query: &str) -> Vec<String> {
    let mut end = reply.len().min(REPLY_READ_BYTES);
    while !reply.is_char_boundary(end) {
        end -= 1;
    }
    let read = &reply[..end];
    let held: std::collections::HashSet<String> =
        identifiers(query).map(|w| w.to_lowercase()).collect();
    let mut seen = std::collections::HashSet::new();
    let mut terms = Vec::new();
    for word in identifiers(read) {
        let chars = word.chars().count();
        if !(2..=MAX_TERM_CHARS).contains(&chars) {
            continue;
        }
        let lower = word.to_lowercase();
        if held.contains(&lower) || !seen.insert(lower) {
            continue;
        }
        terms.push(word.to_string());
        if terms.len() == MAX_TERMS {
            break;
        }
    }
    terms
}

/// Runs of ASCII letters, digits and `_` that start with a letter or `_`.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_the_replys_new_names_bounded() {
        let reply = "`io_uring_cancel` IoUring::cancel_op, cancel; io_uring_cancel 42 x \
                     <script>alert(1)</script>";
        let terms = terms_of(reply, "where are io_uring ops cancelled");
        assert_eq!(
            terms,
            [
                "io_uring_cancel",
                "IoUring",
                "cancel_op",
                "cancel",
                "script",
                "alert"
            ]
        );
        let many: String = (0..100).map(|i| format!("name{i} ")).collect();
        assert_eq!(terms_of(&many, "q").len(), MAX_TERMS);
        let long = "a".repeat(MAX_TERM_CHARS + 1);
        assert!(terms_of(&long, "q").is_empty());
        assert!(terms_of("Ünïcode ßtraße", "q").iter().all(|t| t.is_ascii()));
    }
}
