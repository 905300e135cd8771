//! Checking one line before anything else sees it: a skipping pass with serde_json's syntax
//! and nesting rules (at most [`MAX_VALUES_PER_MESSAGE`] values), then the envelope
//! (`jsonrpc`, `id`, `method`, `params` as borrowed raw slices), giving what the framing does
//! with the line ([`Checked`]): pass it on as text, answer it here, or drop it. Cancellations
//! are recognised here so the pipeline can act on them before the request queue.

use super::*;

/// What the framing does with one line.
pub(super) enum Checked {
    Pass(Message),
    /// Answer it here (a whole JSON-RPC line).
    Reply(Vec<u8>),
    /// Drop it (never answered: a notification or a stray response).
    Drop(String),
}

/// The id the typed cancellation carries until the pipeline puts its own in its place.
const PLACEHOLDER_ID: i64 = 0;

/// A line's top level, read without building a tree: the fields the framing looks at are
/// borrowed raw slices (nothing allocated); others are skipped. A key sent
/// twice counts once, the last one, as in a parsed JSON object.
enum TopLevel<'a> {
    Object(Envelope<'a>),
    Array,
    Other,
}

#[derive(Default)]
struct Envelope<'a> {
    jsonrpc: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    result: bool,
    error: bool,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Key {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for TopLevel<'de> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> de::Visitor<'de> for Visit {
            type Value = TopLevel<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut envelope = Envelope::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Jsonrpc => envelope.jsonrpc = Some(map.next_value()?),
                        Key::Id => envelope.id = Some(map.next_value()?),
                        Key::Method => envelope.method = Some(map.next_value()?),
                        Key::Params => envelope.params = Some(map.next_value()?),
                        Key::Result => {
                            map.next_value::<IgnoredAny>()?;
                            envelope.result = true;
                        }
                        Key::Error => {
                            map.next_value::<IgnoredAny>()?;
                            envelope.error = true;
                        }
                        Key::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(TopLevel::Object(envelope))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(TopLevel::Array)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(TopLevel::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(TopLevel::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(TopLevel::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(TopLevel::Other)
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(TopLevel::Other)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(TopLevel::Other)
            }
        }
        deserializer.deserialize_any(Visit)
    }
}

/// A scalar as a `Value` (a string, number, boolean or null); an array or object is
/// `None`, without being parsed.
fn scalar(raw: &RawValue) -> Option<Value> {
    match raw.get().as_bytes().first() {
        Some(b'[' | b'{') | None => None,
        Some(_) => serde_json::from_str(raw.get()).ok(),
    }
}

/// A raw JSON string's text.
fn string(raw: &RawValue) -> Option<String> {
    match scalar(raw)? {
        Value::String(text) => Some(text),
        _ => None,
    }
}

/// A usable JSON-RPC id: a string or an integer.
fn usable_id(raw: &RawValue) -> Option<Value> {
    scalar(raw).filter(|id| id.is_string() || id.is_i64() || id.is_u64())
}

pub(super) fn is_object(raw: &RawValue) -> bool {
    raw.get().starts_with('{')
}

/// `{"method":…,"params":…}` from the line's own slices: what rmcp's request and
/// notification types read (they ignore `jsonrpc`, `id` and unknown keys), method first.
fn method_and_params(method: &RawValue, params: Option<&RawValue>) -> Box<[u8]> {
    let params_len = params.map_or(0, |p| p.get().len() + 10);
    let mut text = Vec::with_capacity(method.get().len() + params_len + 12);
    text.extend_from_slice(b"{\"method\":");
    text.extend_from_slice(method.get().as_bytes());
    if let Some(params) = params {
        text.extend_from_slice(b",\"params\":");
        text.extend_from_slice(params.get().as_bytes());
    }
    text.push(b'}');
    text.into_boxed_slice()
}

/// Most JSON values (objects, arrays, strings, numbers, object keys: each counts one) in
/// one message.
/// A message becomes rmcp's typed request, a tree of `serde_json::Value`s, when it starts:
/// 30 to 80 bytes a value, so a 14 MB line of small numbers would take over 400 MiB. No
/// request of any tool comes near this (a `read_files` list, an `edits` array and a
/// client's thousands of roots are a few thousand values); past it the message is refused
/// unparsed (`-32600`, with its id).
pub const MAX_VALUES_PER_MESSAGE: usize = 250_000;

/// Any JSON value, read and dropped while its values are counted: syntax and nesting are
/// checked exactly as parsing a `Value` checks them (serde_json's recursion limit: what
/// nests too deeply is a parse error here, as it would be for rmcp), but nothing is kept.
/// Fails as soon as the count passes [`MAX_VALUES_PER_MESSAGE`].
struct Skip<'a>(&'a std::cell::Cell<usize>);

/// The message an over-full count fails with (recognised in [`envelope`]).
const TOO_MANY_VALUES: &str = "too many JSON values";

impl<'de> de::DeserializeSeed<'de> for Skip<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        struct Visit<'a>(&'a std::cell::Cell<usize>);
        impl Visit<'_> {
            fn one<E: de::Error>(&self) -> Result<(), E> {
                let n = self.0.get() + 1;
                self.0.set(n);
                if n > MAX_VALUES_PER_MESSAGE {
                    return Err(E::custom(TOO_MANY_VALUES));
                }
                Ok(())
            }
        }
        impl<'de> de::Visitor<'de> for Visit<'_> {
            type Value = ();
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
                self.one()?;
                while map.next_entry_seed(Skip(self.0), Skip(self.0))?.is_some() {}
                Ok(())
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
                self.one()?;
                while seq.next_element_seed(Skip(self.0))?.is_some() {}
                Ok(())
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
                self.one()
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
                self.one()
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
                self.one()
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
                self.one()
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
                self.one()
            }
            fn visit_unit<E: de::Error>(self) -> Result<(), E> {
                self.one()
            }
        }
        deserializer.deserialize_any(Visit(self.0))
    }
}

/// Checks `text` is one JSON value a `Value` parse would accept, with at most
/// [`MAX_VALUES_PER_MESSAGE`] values, keeping nothing.
fn skim(text: &str) -> Result<(), serde_json::Error> {
    use serde::de::DeserializeSeed;
    let count = std::cell::Cell::new(0);
    let mut de = serde_json::Deserializer::from_str(text);
    Skip(&count).deserialize(&mut de)?;
    de.end()
}

/// What the framing does with `line`: the syntax pass ([`envelope`]), then by what the
/// envelope holds, a request, a notification or a response.
pub(super) fn check(line: &[u8]) -> Checked {
    let object = match envelope(line) {
        Ok(object) => object,
        Err(reply) => return Checked::Reply(reply),
    };
    match (object.method, object.id) {
        (Some(raw_method), Some(raw_id)) => check_request(&object, raw_method, raw_id),
        (Some(raw_method), None) => check_notification(&object, raw_method),
        // A response to one of our requests.
        (None, Some(_)) if object.result != object.error && object.version_ok() => {
            Checked::Pass(Message::Response(line.into()))
        }
        (None, Some(raw_id)) if raw_id.get() == "null" => {
            Checked::Drop("an error response without an id".into())
        }
        (None, id) => {
            let id = id.and_then(usable_id);
            Checked::Reply(error_line_with_id(
                id.as_ref().unwrap_or(&Value::Null),
                -32600,
                "invalid request: expected a JSON-RPC request, notification or response",
            ))
        }
    }
}

/// The syntax pass: the envelope of a line that is one JSON object a `Value` parse would
/// accept, with at most [`MAX_VALUES_PER_MESSAGE`] values; else the error line answering it.
fn envelope(line: &[u8]) -> Result<Envelope<'_>, Vec<u8>> {
    // Two passes over the text, neither of which builds anything: `Skip` checks it is
    // JSON a `Value` parse would accept, then the envelope's slices are taken.
    let mut too_many = false;
    let parsed = std::str::from_utf8(line)
        .map_err(|err| err.to_string())
        .and_then(|text| {
            skim(text)
                .inspect_err(|err| too_many = err.to_string().starts_with(TOO_MANY_VALUES))
                .and_then(|_| serde_json::from_str::<TopLevel>(text))
                .map_err(|err| err.to_string())
        });
    if too_many {
        // The envelope's slices cost nothing: answer with the id when there is one.
        let id = std::str::from_utf8(line)
            .ok()
            .and_then(|text| serde_json::from_str::<TopLevel>(text).ok())
            .and_then(|top| match top {
                TopLevel::Object(object) => object.id.and_then(usable_id),
                _ => None,
            });
        return Err(error_line_with_id(
            id.as_ref().unwrap_or(&Value::Null),
            -32600,
            &format!(
                "invalid request: the message holds more than {MAX_VALUES_PER_MESSAGE} JSON \
                 values (objects, arrays, strings, numbers); no tool takes that many"
            ),
        ));
    }
    match parsed {
        Ok(TopLevel::Object(object)) => Ok(object),
        Ok(TopLevel::Array) => Err(error_line(
            -32600,
            "batch requests are not supported; send one JSON-RPC message per line",
        )),
        Ok(TopLevel::Other) => Err(error_line(
            -32600,
            "invalid request: a JSON-RPC message is a JSON object",
        )),
        Err(err) => {
            tracing::debug!("parse error on input line: {err}");
            Err(error_line(-32700, &format!("Parse error: {err}")))
        }
    }
}

impl Envelope<'_> {
    /// `"jsonrpc": "2.0"`.
    fn version_ok(&self) -> bool {
        self.jsonrpc.and_then(string).as_deref() == Some("2.0")
    }

    /// No `params`, or an object.
    fn params_ok(&self) -> bool {
        self.params.is_none_or(is_object)
    }
}

/// A request (`method` and `id`): passed on, or answered here by its id when the id, the
/// method, the version, the params or the shape is wrong.
fn check_request(object: &Envelope, raw_method: &RawValue, raw_id: &RawValue) -> Checked {
    // JSON-RPC ids are strings or integers; anything else cannot be answered by id.
    let Some(id) = usable_id(raw_id) else {
        return Checked::Reply(error_line(
            -32600,
            "invalid request id: use a string or an integer",
        ));
    };
    let Some(method) = string(raw_method) else {
        return Checked::Reply(error_line_with_id(
            &id,
            -32600,
            "invalid request: \"method\" must be a string",
        ));
    };
    if !object.version_ok() {
        return Checked::Reply(error_line_with_id(
            &id,
            -32600,
            "invalid request: \"jsonrpc\" must be \"2.0\"",
        ));
    }
    if !object.params_ok() {
        return Checked::Reply(error_line_with_id(
            &id,
            -32602,
            &format!(
                "invalid params for {}: params must be an object",
                rootgrep_core::quote::echo(&method)
            ),
        ));
    }
    if object.result || object.error {
        return Checked::Reply(error_line_with_id(
            &id,
            -32602,
            &format!(
                "invalid params for {}: the message does not match the JSON-RPC \
                 request shape",
                rootgrep_core::quote::echo(&method)
            ),
        ));
    }
    Checked::Pass(Message::Request {
        id,
        text: method_and_params(raw_method, object.params),
        method,
    })
}

/// A notification (`method`, no `id`): never answered, whatever is wrong with it; a
/// cancellation is typed here so the pipeline can act on it first.
fn check_notification(object: &Envelope, raw_method: &RawValue) -> Checked {
    let Some(method) = string(raw_method) else {
        return Checked::Drop("a notification whose method is not a string".into());
    };
    if !object.version_ok() || !object.params_ok() || object.result || object.error {
        return Checked::Drop(format!("a malformed {method} notification"));
    }
    if method == "notifications/cancelled" {
        return match cancellation(object.params) {
            Some((request_id, notification)) => Checked::Pass(Message::Cancel {
                request_id,
                notification,
            }),
            None => Checked::Drop("a cancellation without a usable requestId".into()),
        };
    }
    Checked::Pass(Message::Notification(method_and_params(
        raw_method,
        object.params,
    )))
}

/// The params of `notifications/cancelled`, as rmcp reads them.
#[derive(Deserialize)]
struct CancelParams<'a> {
    #[serde(borrow, rename = "requestId")]
    request_id: Option<&'a RawValue>,
    reason: Option<String>,
    #[serde(borrow, rename = "_meta")]
    meta: Option<&'a RawValue>,
}

/// The client's request id and a typed cancellation pointing at [`PLACEHOLDER_ID`] (its
/// `_meta` is not kept: rmcp cancels by id alone).
fn cancellation(params: Option<&RawValue>) -> Option<(Value, ClientNotification)> {
    let params: CancelParams = serde_json::from_str(params?.get()).ok()?;
    let request_id = usable_id(params.request_id?)?;
    if params.meta.is_some_and(|meta| !is_object(meta)) {
        return None;
    }
    let param =
        CancelledNotificationParam::new(Some(RequestId::Number(PLACEHOLDER_ID)), params.reason);
    Some((
        request_id,
        ClientNotification::CancelledNotification(Notification::new(param)),
    ))
}
