//! One JSON-RPC message from an MCP server, judged against the id of the call it should answer:
//! the answer (a result, a tool's error, a JSON-RPC error), a notification, or something a
//! client cannot accept. Must not know HTTP, sockets or clocks.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// What became of a call whose answer arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A result (for `tools/call`, one without `isError: true`).
    Success,
    /// A `tools/call` result with `isError: true`: the tool ran and failed.
    ToolError,
    /// A result that asks the client for input first (`resultType: "input_required"`), which a
    /// load test cannot give.
    InputRequired,
    /// A JSON-RPC error object.
    RpcError { code: i64, message: String },
}

/// One message as it bears on the call with id `id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judged {
    /// The response to the call.
    Answer(Answer),
    /// A notification; `progress` for `notifications/progress`.
    Notification { progress: bool },
    /// A request from the server (sampling, elicitation, roots in revisions before
    /// 2026-07-28): a load test does not answer it.
    ServerRequest,
    /// A response to another id, or a response with no id that is not an error.
    OtherId,
    /// Not a JSON-RPC 2.0 message; says why.
    Invalid(&'static str),
}

/// A message as far as judging it needs, each part kept as its raw JSON: a result or an error
/// of any size or depth is neither copied nor parsed as a whole (serde_json skips a raw value
/// without recursion, so a result nested deeper than its parser's limit is judged too).
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    jsonrpc: Raw<'a>,
    #[serde(borrow, default)]
    method: Raw<'a>,
    #[serde(borrow, default)]
    id: Raw<'a>,
    #[serde(borrow, default)]
    result: Raw<'a>,
    #[serde(borrow, default)]
    error: Raw<'a>,
}

/// A member as it was written, `null` included; `None` when the message has no such member.
#[derive(Default)]
struct Raw<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for Raw<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&RawValue>::deserialize(d).map(|r| Raw(Some(r)))
    }
}

/// What of a result judging needs.
#[derive(Deserialize)]
struct ResultHead {
    #[serde(rename = "isError", default)]
    is_error: Option<Value>,
    #[serde(rename = "resultType", default)]
    result_type: Option<Value>,
}

/// Judges the JSON text `bytes` against the call `id`. A batch (an array) is not a message an
/// MCP server sends.
pub fn judge(bytes: &[u8], id: u64) -> Judged {
    judge_among(bytes, &[id]).0
}

/// Judges the JSON text `bytes` against the calls `ids` awaited at once (oldest first): the
/// verdict, and for a response the place in `ids` of the call it answers. An error the server
/// could not tie to a request answers the oldest.
pub fn judge_among(bytes: &[u8], ids: &[u64]) -> (Judged, usize) {
    let mut at = 0;
    (judge_in(bytes, ids, &mut at), at)
}

fn judge_in(bytes: &[u8], ids: &[u64], at: &mut usize) -> Judged {
    let Ok(v) = serde_json::from_slice::<&RawValue>(bytes) else {
        return Judged::Invalid("a message that is not JSON");
    };
    if !v.get().starts_with('{') {
        return Judged::Invalid("a message that is not a JSON object");
    }
    let Ok(m) = serde_json::from_str::<Message<'_>>(v.get()) else {
        return Judged::Invalid("a message that is not a JSON-RPC object");
    };
    let version = m.jsonrpc.0.map(|v| serde_json::from_str::<String>(v.get()));
    if !matches!(version, Some(Ok(v)) if v == "2.0") {
        return Judged::Invalid("a message without \"jsonrpc\": \"2.0\"");
    }
    if let Some(method) = m.method.0 {
        let Ok(method) = serde_json::from_str::<String>(method.get()) else {
            return Judged::Invalid("a message whose method is not a string");
        };
        return match m.id.0.is_some() {
            true => Judged::ServerRequest,
            false => Judged::Notification {
                progress: method == "notifications/progress",
            },
        };
    }
    let place = |id: Option<u64>| id.and_then(|id| ids.iter().position(|&i| i == id));
    let ours = match m.id.0.map(|i| serde_json::from_str::<Value>(i.get())) {
        Some(Ok(Value::Number(n))) => place(n.as_u64()),
        // A string id that spells the number is the same id to a lenient server.
        Some(Ok(Value::String(s))) => place(s.parse::<u64>().ok()),
        // An error the server could not tie to a request (a parse error) answers the oldest
        // request in flight.
        Some(Ok(Value::Null)) | None => (m.error.0.is_some() && !ids.is_empty()).then_some(0),
        Some(_) => return Judged::Invalid("a response whose id is neither a number nor a string"),
    };
    let Some(place) = ours else {
        return Judged::OtherId;
    };
    *at = place;
    match (m.result.0, m.error.0) {
        // A result is an object (JSON-RPC 2.0 leaves it open; MCP's results are all objects).
        (Some(r), None) if r.get().starts_with('{') => match serde_json::from_str(r.get()) {
            Ok(head) => Judged::Answer(result(&head)),
            Err(_) => Judged::Invalid("a result that is not a JSON object"),
        },
        (Some(_), None) => Judged::Invalid("a result that is not an object"),
        (None, Some(e)) => match serde_json::from_str::<Value>(e.get())
            .ok()
            .and_then(|e| error(&e))
        {
            Some(a) => Judged::Answer(a),
            None => Judged::Invalid("a JSON-RPC error without an integer code"),
        },
        (Some(_), Some(_)) => Judged::Invalid("a response with both result and error"),
        (None, None) => Judged::Invalid("a response with neither result nor error"),
    }
}

fn result(r: &ResultHead) -> Answer {
    if r.is_error.as_ref().and_then(Value::as_bool) == Some(true) {
        return Answer::ToolError;
    }
    // Results from servers of revisions before 2026-07-28 have no resultType: complete.
    match r.result_type.as_ref().and_then(Value::as_str) {
        Some("input_required") => Answer::InputRequired,
        _ => Answer::Success,
    }
}

fn error(e: &Value) -> Option<Answer> {
    let code = e.get("code")?.as_i64()?;
    let message = e
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .chars()
        .take(200)
        .collect();
    Some(Answer::RpcError { code, message })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(s: &str) -> Judged {
        judge(s.as_bytes(), 7)
    }

    #[test]
    fn a_result_is_a_success_and_is_error_a_tool_error() {
        assert_eq!(
            j(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"isError":false}}"#),
            Judged::Answer(Answer::Success)
        );
        assert_eq!(
            j(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"isError":true}}"#),
            Judged::Answer(Answer::ToolError)
        );
        assert_eq!(
            j(r#"{"jsonrpc":"2.0","id":"7","result":{"resultType":"input_required"}}"#),
            Judged::Answer(Answer::InputRequired)
        );
        assert_eq!(
            j(r#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete"}}"#),
            Judged::Answer(Answer::Success)
        );
    }

    #[test]
    fn errors_keep_their_code_and_an_error_without_id_answers_the_call() {
        assert_eq!(
            j(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad"}}"#),
            Judged::Answer(Answer::RpcError {
                code: -32602,
                message: "bad".into()
            })
        );
        assert_eq!(
            j(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}"#),
            Judged::Answer(Answer::RpcError {
                code: -32700,
                message: "parse".into()
            })
        );
        assert!(matches!(
            j(r#"{"jsonrpc":"2.0","id":7,"error":{"message":"no code"}}"#),
            Judged::Invalid(_)
        ));
    }

    #[test]
    fn other_messages_are_told_apart() {
        assert_eq!(
            j(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#),
            Judged::Notification { progress: true }
        );
        assert_eq!(
            j(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#),
            Judged::Notification { progress: false }
        );
        assert_eq!(
            j(r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"}"#),
            Judged::ServerRequest
        );
        assert_eq!(
            j(r#"{"jsonrpc":"2.0","id":8,"result":{}}"#),
            Judged::OtherId
        );
        assert_eq!(j(r#"{"jsonrpc":"2.0","result":{}}"#), Judged::OtherId);
        for bad in [
            "not json",
            "[1]",
            r#"{"id":7,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1}}"#,
            r#"{"jsonrpc":"2.0","id":[7],"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":null}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":"done"}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":[]}"#,
        ] {
            assert!(matches!(j(bad), Judged::Invalid(_)), "{bad}");
        }
    }
}
