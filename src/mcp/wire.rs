//! The HTTP requests of MCP's Streamable HTTP transport, revision 2026-07-28 (no handshake, no
//! session: each request carries its protocol version and client in `_meta`, and mirrors its
//! method, name and annotated arguments into headers), as the header list and body a Plan
//! takes. Built once per call, before the run. Must not know sockets.

use base64::Engine;
use serde_json::{Map, Value, json};

use super::call::{Call, Method};

/// The revision spate speaks without a handshake.
pub const MODERN: &str = "2026-07-28";

/// Who spate says it is in `_meta`.
pub fn client_info() -> Value {
    json!({"name": "spate", "version": env!("CARGO_PKG_VERSION")})
}

/// The request of `call` with JSON-RPC id `id`: headers (besides Host, Content-Length and the
/// user's own) and body. `schema` is the tool's `inputSchema` from `tools/list`, whose
/// `x-mcp-header` annotations say which arguments go into headers too. `progress`: the request
/// asks for progress notifications (its token is its id).
pub fn request(
    call: &Call,
    id: u64,
    schema: Option<&Value>,
    progress: bool,
) -> (Vec<(String, String)>, Vec<u8>) {
    let mut params = call.params();
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": client_info(),
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    if progress {
        meta["progressToken"] = json!(id);
    }
    params.insert("_meta".into(), meta);
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": call.rpc_method(),
        "params": Value::Object(params),
    });
    let mut headers = vec![
        ("Content-Type".to_string(), "application/json".to_string()),
        (
            "Accept".to_string(),
            "application/json, text/event-stream".to_string(),
        ),
        ("MCP-Protocol-Version".to_string(), MODERN.to_string()),
        ("Mcp-Method".to_string(), call.rpc_method().to_string()),
    ];
    if let Some(name) = call.name() {
        headers.push(("Mcp-Name".to_string(), header_value(name)));
    }
    if let (Method::Tool { arguments, .. }, Some(schema)) = (&call.method, schema) {
        for (header, path) in mirrored(schema).unwrap_or_default() {
            if let Some(v) = at_path(arguments, &path).and_then(primitive) {
                headers.push((format!("Mcp-Param-{header}"), header_value(&v)));
            }
        }
    }
    let body = serde_json::to_vec(&body).expect("a JSON value serializes");
    (headers, body)
}

/// The request of `call` with id `id` in a session of revision `version` (before 2026-07-28):
/// the protocol version header (the session's id is added per session), and a body without
/// the stateless revision's `_meta`.
pub fn with_handshake(
    call: &Call,
    id: u64,
    version: &str,
    progress: bool,
) -> (Vec<(String, String)>, Vec<u8>) {
    let mut params = call.params();
    if progress {
        params.insert("_meta".into(), json!({"progressToken": id}));
    }
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": call.rpc_method(),
        "params": Value::Object(params),
    });
    let headers = vec![
        ("Content-Type".to_string(), "application/json".to_string()),
        (
            "Accept".to_string(),
            "application/json, text/event-stream".to_string(),
        ),
        ("MCP-Protocol-Version".to_string(), version.to_string()),
    ];
    (
        headers,
        serde_json::to_vec(&body).expect("a JSON value serializes"),
    )
}

/// `request` (a request spate built) with its JSON-RPC id `old` made `new`, and the progress
/// token that repeats it: the body is read as JSON and those two members set, so that nothing
/// else (a tool's argument that happens to equal the id) changes. Ids of one width
/// (`SHARED_IDS`) keep the body's length, and the head's `Content-Length` with it.
pub fn with_id(request: &[u8], old: u64, new: u64) -> bytes::Bytes {
    let at = request
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(request.len(), |p| p + 4);
    let Ok(mut body) = serde_json::from_slice::<Value>(&request[at..]) else {
        return bytes::Bytes::copy_from_slice(request);
    };
    if body.get("id") == Some(&json!(old)) {
        body["id"] = json!(new);
    }
    if let Some(token) = body.pointer_mut("/params/_meta/progressToken")
        && *token == json!(old)
    {
        *token = json!(new);
    }
    let mut out = request[..at].to_vec();
    let written = serde_json::to_vec(&body).expect("a JSON value serializes");
    debug_assert_eq!(written.len(), request.len() - at, "ids of one width");
    out.extend_from_slice(&written);
    bytes::Bytes::from(out)
}

/// A header value as the transport carries it: plain when it is visible ASCII and spaces with
/// none at either end, else `=?base64?...?=` of its UTF-8 (as is a plain value that looks like
/// that form).
pub fn header_value(v: &str) -> String {
    let visible = v.bytes().all(|b| (0x20..0x7F).contains(&b) || b == b'\t');
    let padded = v.starts_with([' ', '\t']) || v.ends_with([' ', '\t']);
    let sentinel = v.starts_with("=?base64?") && v.ends_with("?=");
    match visible && !padded && !sentinel {
        true => v.to_string(),
        false => format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(v)
        ),
    }
}

/// The `x-mcp-header` annotations of a tool's input schema: each header name and the chain of
/// `properties` keys that leads to its argument. `Err` says why the tool definition is invalid
/// (the transport's rules: a token, unique without regard to case, on a string, integer or
/// boolean reachable only through `properties`).
pub fn mirrored(schema: &Value) -> Result<Vec<(String, Vec<String>)>, String> {
    let mut found = Vec::new();
    walk(schema, &mut Vec::new(), true, &mut found)?;
    let mut seen: Vec<String> = Vec::new();
    for (h, _) in &found {
        if !crate::plan::is_token(h) {
            return Err(format!("x-mcp-header {h:?} is not a header name"));
        }
        if seen.iter().any(|s| s.eq_ignore_ascii_case(h)) {
            return Err(format!("x-mcp-header {h:?} is given twice"));
        }
        seen.push(h.clone());
    }
    Ok(found)
}

fn walk(
    v: &Value,
    path: &mut Vec<String>,
    reachable: bool,
    found: &mut Vec<(String, Vec<String>)>,
) -> Result<(), String> {
    let Some(m) = v.as_object() else {
        if let Some(items) = v.as_array() {
            for i in items {
                walk(i, path, false, found)?;
            }
        }
        return Ok(());
    };
    if let Some(h) = m.get("x-mcp-header") {
        let Some(h) = h.as_str() else {
            return Err("an x-mcp-header that is not a string".into());
        };
        if !reachable || path.is_empty() {
            return Err(format!(
                "x-mcp-header {h:?} is not on a property reached through \"properties\" alone"
            ));
        }
        let ty = m.get("type").and_then(Value::as_str);
        if !matches!(ty, Some("string" | "integer" | "boolean")) {
            return Err(format!(
                "x-mcp-header {h:?} is on a property that is not a string, integer or boolean"
            ));
        }
        found.push((h.to_string(), path.clone()));
    }
    for (k, child) in m {
        match (k.as_str(), child.as_object()) {
            ("properties", Some(props)) => {
                for (name, p) in props {
                    path.push(name.clone());
                    walk(p, path, reachable, found)?;
                    path.pop();
                }
            }
            _ => walk(child, path, false, found)?,
        }
    }
    Ok(())
}

fn at_path<'a>(args: &'a Map<String, Value>, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let mut v = args.get(first)?;
    for k in rest {
        v = v.get(k)?;
    }
    Some(v)
}

fn primitive(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_sessions_ids_change_in_place() {
        let r = b"POST /mcp HTTP/1.1\r\nContent-Length: 60\r\n\r\n{\"id\":1000000003,\"params\":{\"_meta\":{\"progressToken\":1000000003},\"arguments\":{\"n\":1000000003,\"m\":11000000003,\"s\":\"1000000003\"}}}";
        let out = with_id(r, 1_000_000_003, 1_000_001_027);
        assert_eq!(out.len(), r.len());
        let text = String::from_utf8_lossy(&out);
        assert!(text.contains("\"id\":1000001027"), "{text}");
        assert!(text.contains("\"progressToken\":1000001027"), "{text}");
        // The id and its token only: a tool's argument equal to it stays as it was.
        assert!(
            text.contains(
                "\"arguments\":{\"m\":11000000003,\"n\":1000000003,\"s\":\"1000000003\"}"
            ),
            "{text}"
        );
        assert!(text.contains("Content-Length: 60"), "{text}");
    }

    fn tool(args: Value) -> Call {
        Call {
            method: Method::Tool {
                name: "execute_sql".into(),
                arguments: args.as_object().unwrap().clone(),
            },
            weight: 1,
        }
    }

    #[test]
    fn a_tool_call_carries_its_version_method_and_name_in_body_and_headers() {
        let (h, body) = request(&tool(json!({"a": 1})), 9, None, true);
        let get = |n: &str| h.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
        assert_eq!(get("MCP-Protocol-Version"), Some(MODERN));
        assert_eq!(get("Mcp-Method"), Some("tools/call"));
        assert_eq!(get("Mcp-Name"), Some("execute_sql"));
        assert_eq!(get("Accept"), Some("application/json, text/event-stream"));
        let b: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(b["id"], 9);
        assert_eq!(b["params"]["arguments"]["a"], 1);
        assert_eq!(
            b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            MODERN
        );
        assert_eq!(b["params"]["_meta"]["progressToken"], 9);
    }

    #[test]
    fn annotated_arguments_are_mirrored_and_encoded() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "deep": {"type": "object", "properties": {
                "flag": {"type": "boolean", "x-mcp-header": "Flag"}}},
            "query": {"type": "string"}}});
        let call = tool(json!({"region": "Hello, 世界", "n": 42, "deep": {"flag": true}}));
        let (h, _) = request(&call, 1, Some(&schema), false);
        let get = |n: &str| h.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
        assert_eq!(
            get("Mcp-Param-Region"),
            Some("=?base64?SGVsbG8sIOS4lueVjA==?=")
        );
        assert_eq!(get("Mcp-Param-N"), Some("42"));
        assert_eq!(get("Mcp-Param-Flag"), Some("true"));
        // An argument that is not given has no header.
        let (h, _) = request(&tool(json!({})), 1, Some(&schema), false);
        assert!(!h.iter().any(|(k, _)| k.starts_with("Mcp-Param-")));
    }

    #[test]
    fn values_are_encoded_as_the_transport_says() {
        assert_eq!(header_value("us-west1"), "us-west1");
        assert_eq!(header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(header_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn invalid_annotations_are_refused() {
        for schema in [
            json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"oneOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "A"},
                                  "b": {"type": "string", "x-mcp-header": "a"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "A B"}}}),
        ] {
            assert!(mirrored(&schema).is_err(), "{schema}");
        }
    }
}
