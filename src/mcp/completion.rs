//! `completion/complete`: completes the `path` variable of the `file:///{+path}` template
//! and the path arguments of the prompts, and `find_usages`'s `symbol` from the symbol
//! index (definition names; nothing before a root's index is built). Values never lead outside the roots (or the
//! directories the user granted), and the user is never asked anything here.

use rmcp::ErrorData as McpError;
use rmcp::model::{CompleteRequestParams, CompleteResult, Reference};
use serde_json::json;

use crate::complete::{self, Completion};
use crate::mcp::session::Session;

/// Most values one completion answer carries (the protocol's limit).
const MAX_VALUES: usize = 100;

/// Completes one argument.
pub async fn complete(
    session: &Session,
    roots: &crate::roots::RootSet,
    request: CompleteRequestParams,
) -> Result<CompleteResult, McpError> {
    let wanted = match &request.r#ref {
        Reference::Resource(template) => {
            template.uri == crate::mcp::resources::TEMPLATE && request.argument.name == "path"
        }
        Reference::Prompt(prompt) => {
            matches!(prompt.name.as_str(), "explain_file" | "find_usages")
                && request.argument.name == "path"
        }
        _ => false,
    };
    let prompt_form = matches!(request.r#ref, Reference::Prompt(_));
    let symbol_names = matches!(&request.r#ref, Reference::Prompt(prompt)
        if prompt.name == "find_usages" && request.argument.name == "symbol");
    let completion = if symbol_names {
        let symbols = session.live.as_ref().and_then(|live| live.symbols.clone());
        let value = request.argument.value.clone();
        tokio::task::spawn_blocking(move || match symbols {
            Some(symbols) => {
                let (values, has_more) = symbols.complete_names(value.trim(), MAX_VALUES);
                Completion {
                    // More than the values when there are more (not counted further).
                    total: values.len() + usize::from(has_more),
                    values,
                    has_more,
                }
            }
            None => Completion::default(),
        })
        .await
        .map_err(|err| McpError::internal_error(format!("completion failed: {err}"), None))?
    } else if wanted {
        let roots = roots.existing();
        let value = request.argument.value.clone();
        let index = session.live.as_ref().map(|live| live.index.clone());
        tokio::task::spawn_blocking(move || {
            let index = index.as_deref();
            // Template values are absolute paths without their leading '/'; prompt values
            // are typed by people: absolute or not, keep their form. Windows paths have no
            // leading '/' to take off (`C:\x`, and `//srv/share` is a share): the domain
            // takes them as typed.
            if cfg!(windows) {
                let form = if prompt_form {
                    complete::Form::Plain
                } else {
                    complete::Form::Uri
                };
                complete::complete_in(&roots, &value, form, index)
            } else if prompt_form {
                // Plain paths; absolute ones keep their leading '/'.
                let absolute = value.starts_with('/');
                let mut completion = complete::complete_in(
                    &roots,
                    value.trim_start_matches('/'),
                    complete::Form::Plain,
                    index,
                );
                if absolute {
                    for value in &mut completion.values {
                        value.insert(0, '/');
                    }
                }
                completion
            } else {
                // A template value is an absolute path without its leading '/'; tolerate
                // one typed with it (the values returned are in the template's form).
                complete::complete_in(
                    &roots,
                    value.trim_start_matches('/'),
                    complete::Form::Uri,
                    index,
                )
            }
        })
        .await
        .map_err(|err| McpError::internal_error(format!("completion failed: {err}"), None))?
    } else {
        Completion::default()
    };
    serde_json::from_value(json!({
        "resultType": "complete",
        "completion": {
            "values": completion.values,
            "total": completion.total,
            "hasMore": completion.has_more,
        }
    }))
    .map_err(|err| McpError::internal_error(format!("completion failed: {err}"), None))
}
