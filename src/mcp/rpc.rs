//! One JSON-RPC message from an MCP server, judged against the id of the call it should answer:
//! the answer (a result, a tool's error, a JSON-RPC error), a notification, or something a
//! client cannot accept. Must not know HTTP, sockets or clocks.

use serde_json::Value;

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

/// Judges the JSON text `bytes` against the call `id`. A batch (an array) is not a message an
/// MCP server sends.
pub fn judge(bytes: &[u8], id: u64) -> Judged {
    let Ok(v) = serde_json::from_slice::<Value>(bytes) else {
        return Judged::Invalid("a message that is not JSON");
    };
    judge_value(&v, id)
}

/// As [`judge`], for a parsed message.
pub fn judge_value(v: &Value, id: u64) -> Judged {
    let Some(m) = v.as_object() else {
        return Judged::Invalid("a message that is not a JSON object");
    };
    if m.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Judged::Invalid("a message without \"jsonrpc\": \"2.0\"");
    }
    if let Some(method) = m.get("method") {
        let Some(method) = method.as_str() else {
            return Judged::Invalid("a message whose method is not a string");
        };
        return match m.contains_key("id") {
            true => Judged::ServerRequest,
            false => Judged::Notification {
                progress: method == "notifications/progress",
            },
        };
    }
    let ours = match m.get("id") {
        Some(Value::Number(n)) => n.as_u64() == Some(id),
        // A string id that spells the number is the same id to a lenient server.
        Some(Value::String(s)) => s.parse::<u64>().ok() == Some(id),
        // An error the server could not tie to a request (a parse error) answers the one
        // request in flight on the connection.
        Some(Value::Null) | None => m.contains_key("error"),
        Some(_) => return Judged::Invalid("a response whose id is neither a number nor a string"),
    };
    if !ours {
        return Judged::OtherId;
    }
    match (m.get("result"), m.get("error")) {
        (Some(r), None) => Judged::Answer(result(r)),
        (None, Some(e)) => match error(e) {
            Some(a) => Judged::Answer(a),
            None => Judged::Invalid("a JSON-RPC error without an integer code"),
        },
        (Some(_), Some(_)) => Judged::Invalid("a response with both result and error"),
        (None, None) => Judged::Invalid("a response with neither result nor error"),
    }
}

fn result(r: &Value) -> Answer {
    if r.get("isError").and_then(Value::as_bool) == Some(true) {
        return Answer::ToolError;
    }
    // Results from servers of revisions before 2026-07-28 have no resultType: complete.
    match r.get("resultType").and_then(Value::as_str) {
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
        ] {
            assert!(matches!(j(bad), Judged::Invalid(_)), "{bad}");
        }
    }
}
