//! MCP sessions of the revisions before 2026-07-28 (2025-03-26 to 2025-11-25): the handshake a
//! connection makes before its first call (`initialize`, then `notifications/initialized`), the
//! session it yields (the server's `Mcp-Session-Id`, the negotiated version) and each call's
//! request with the session's header, built once per session. Runs on a connection the caller
//! opened, one exchange at a time; must not count anything of the run.

use std::cell::Cell;

use bytes::Bytes;
use serde_json::{Value, json};

use super::wire::client_info;
use crate::plan::Plan;
use crate::proto::Failure;
use crate::proto::h1::slow_lane::{self, Reached};
use crate::proto::h1::{Conn, ReadSpace};
use crate::proto::{Cause, Events, Fail, Media};

/// The revision spate asks for in `initialize`.
pub const ASKED: &str = "2025-11-25";

/// Revisions with a handshake that spate speaks.
pub const KNOWN: [&str; 3] = ["2025-03-26", "2025-06-18", "2025-11-25"];

/// What a handshake settled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The server's `Mcp-Session-Id`, if it gave one.
    pub id: Option<String>,
    /// The protocol revision the server chose.
    pub version: String,
    /// `serverInfo`'s name and version.
    pub server: Option<String>,
}

/// The bytes of `initialize` asking for revision `asked`, for `plan`'s URL and headers.
pub fn initialize_request(plan: &Plan, asked: &str) -> Bytes {
    let body = json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": asked,
            "capabilities": {},
            "clientInfo": client_info(),
        },
    });
    post(
        plan,
        Vec::new(),
        serde_json::to_vec(&body).expect("JSON serializes"),
    )
}

/// The bytes of `notifications/initialized` in a session of revision `version`, without the
/// session's id (`with_session` adds it).
pub fn initialized_request(plan: &Plan, version: &str) -> Bytes {
    let body = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(
        plan,
        vec![("MCP-Protocol-Version".into(), version.into())],
        serde_json::to_vec(&body).expect("JSON serializes"),
    )
}

/// The headers every request of `session` after `initialize` carries.
pub fn session_headers(session: &Session) -> Vec<(String, String)> {
    let mut h = vec![("MCP-Protocol-Version".to_string(), session.version.clone())];
    if let Some(id) = &session.id {
        h.push(("Mcp-Session-Id".to_string(), id.clone()));
    }
    h
}

/// A POST of `body` to `plan`'s URL with MCP's content headers (unless `extra` has them), then
/// `extra`. A header twice is a header some servers refuse (the TypeScript SDK's answers 415).
pub fn post(plan: &Plan, extra: Vec<(String, String)>, body: Vec<u8>) -> Bytes {
    let mut headers = plan.headers.clone();
    for (name, value) in [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ] {
        if !extra.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            headers.push((name.into(), value.into()));
        }
    }
    headers.extend(extra);
    crate::request::h1_bytes(&Plan {
        method: "POST".into(),
        headers,
        body,
        compression: false,
        keep_alive: true,
        list: None,
        ..plan.clone()
    })
}

/// The DELETE that ends a session of revision `version`, without the session's id
/// (`with_session` adds it); the connection closes after it.
pub fn delete_request(plan: &Plan, version: &str) -> Bytes {
    let mut headers = plan.headers.clone();
    headers.push(("MCP-Protocol-Version".into(), version.into()));
    crate::request::h1_bytes(&Plan {
        method: "DELETE".into(),
        headers,
        body: Vec::new(),
        compression: false,
        keep_alive: false,
        list: None,
        ..plan.clone()
    })
}

/// Ends a session with its DELETE ([`delete_request`] with the session's id): whether the
/// server took it (2xx; 405 says the server does not let clients end sessions).
pub async fn end(conn: &mut Conn, delete: &[u8]) -> Result<bool, Fail> {
    let mut space = ReadSpace::new(4 << 10);
    let (status, _) = exchange(conn, delete, &mut space, &mut Heard::default()).await?;
    Ok((200..300).contains(&status))
}

/// `request` (a request spate built, head and body) with the session's id in its head: each
/// call's bytes for one session. Unchanged when the server gave no id.
pub fn with_session(request: &[u8], session: &Session) -> Bytes {
    let Some(id) = &session.id else {
        return Bytes::copy_from_slice(request);
    };
    let end = request
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a request spate built has a head");
    let mut out = Vec::with_capacity(request.len() + id.len() + 20);
    out.extend_from_slice(&request[..end + 2]);
    out.extend_from_slice(b"Mcp-Session-Id: ");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&request[end + 2..]);
    Bytes::from(out)
}

/// The handshake on `conn`: `initialize` (the bytes of [`initialize_request`]), then
/// `notifications/initialized` (of [`initialized_request`]) in the session it opened.
pub async fn handshake(
    conn: &mut Conn,
    initialize: &[u8],
    initialized: &[u8],
    space: &mut ReadSpace,
) -> Result<Session, Fail> {
    let mut got = Heard::default();
    let (res, open) = exchange(conn, initialize, space, &mut got).await?;
    let session = opened(res, open, &mut got)?;
    let mut ack = Heard::default();
    let (status, open) =
        exchange(conn, &with_session(initialized, &session), space, &mut ack).await?;
    acknowledged(status, open)?;
    Ok(session)
}

/// The session the answer to `initialize` opened (its status, whether its connection stays
/// open, what `got` heard of it), or why none: the handshake's first half, over any version.
pub fn opened(status: u16, open: bool, got: &mut Heard) -> Result<Session, Fail> {
    if !(200..300).contains(&status) {
        return Err(refused(format!(
            "the server answered initialize with HTTP {status}"
        )));
    }
    if !open {
        return Err(refused(
            "the server closed the connection after answering initialize".into(),
        ));
    }
    let result = got.result(0).map_err(refused)?;
    let (version, server) = settle(&result).map_err(refused)?;
    let id = got.session.take();
    if let Some(id) = &id {
        check_id(id).map_err(refused)?;
    }
    Ok(Session {
        id,
        version,
        server,
    })
}

/// The longest `Mcp-Session-Id` spate takes: every request of a session carries it, once per
/// request of the list and per slot that shares it. A JWT fits.
pub const MAX_SESSION_ID: usize = 4096;

/// Whether a server's session id is one a client may send back: visible ASCII (the
/// specification's rule), within [`MAX_SESSION_ID`].
fn check_id(id: &str) -> Result<(), String> {
    if id.len() > MAX_SESSION_ID {
        return Err(format!(
            "the server's Mcp-Session-Id is {} bytes long, more than the {MAX_SESSION_ID} spate takes",
            id.len()
        ));
    }
    if !id.bytes().all(|b| (0x21..=0x7E).contains(&b)) {
        return Err("the server's Mcp-Session-Id has characters other than visible ASCII".into());
    }
    Ok(())
}

/// Whether the answer to `notifications/initialized` ends the handshake well.
pub fn acknowledged(status: u16, open: bool) -> Result<(), Fail> {
    if !open {
        return Err(refused(
            "the server closed the connection after the handshake".into(),
        ));
    }
    if !(200..300).contains(&status) {
        return Err(refused(format!(
            "the server answered notifications/initialized with HTTP {status}"
        )));
    }
    Ok(())
}

/// A reply's result as an object (what a handshake reads of it), or why there is none.
pub(super) fn result_of(m: super::client::Reply) -> Result<serde_json::Map<String, Value>, String> {
    match (m.result, m.error) {
        (Some(r), _) => serde_json::from_str(r.get())
            .map_err(|_| "its result is not a JSON object spate can read".into()),
        (None, Some(e)) => Err(format!(
            "it answered with JSON-RPC error {} ({})",
            e.get("code").unwrap_or(&Value::Null),
            e.get("message").and_then(Value::as_str).unwrap_or("")
        )),
        (None, None) => Err("its answer has no result".into()),
    }
}

/// What the result of `initialize` settled: the revision the server chose (one spate speaks)
/// and the server's name.
pub fn settle(result: &serde_json::Map<String, Value>) -> Result<(String, Option<String>), String> {
    let version = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if !KNOWN.contains(&version.as_str()) && version != super::legacy::VERSION {
        return Err(format!(
            "the server chose protocol version {version:?} in initialize, which spate does not speak"
        ));
    }
    let server = result.get("serverInfo").and_then(super::probe::name_of);
    Ok((version, server))
}

fn refused(why: String) -> Fail {
    Fail {
        class: Failure::Protocol,
        cause: Cause::Message(why),
    }
}

/// One exchange on `conn`: the status, and whether the connection stays open.
async fn exchange(
    conn: &mut Conn,
    request: &[u8],
    space: &mut ReadSpace,
    heard: &mut Heard,
) -> Result<(u16, bool), Fail> {
    let (written, bytes_in) = (Cell::new(None), Cell::new(0));
    let reached = Reached {
        written: &written,
        bytes_in: &bytes_in,
    };
    let res = slow_lane::exchange(conn, request, false, space, reached, heard).await?;
    Ok((res.status, res.keep_alive))
}

/// A response's session header, kind and body (bounded): what a handshake reads of an answer.
#[derive(Debug, Default)]
pub struct Heard {
    pub session: Option<String>,
    pub media: Media,
    pub body: Vec<u8>,
}

impl Events for Heard {
    const HEADS: bool = true;

    fn head_bytes(&mut self, head: &[u8]) {
        self.session = header(head, "mcp-session-id");
    }

    fn head(&mut self, _status: u16, media: Media) {
        self.media = media;
    }

    fn data(&mut self, bytes: &[u8]) {
        let room = (16usize << 20).saturating_sub(self.body.len());
        self.body.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

impl Heard {
    /// The `result` of the response with id `id`, or why there is none.
    pub fn result(&self, id: u64) -> Result<serde_json::Map<String, Value>, String> {
        let Some(m) = super::client::message_in(self.media, &self.body, id) else {
            return Err("its answer is not a JSON-RPC response to the request".into());
        };
        result_of(m)
    }
}

/// The value of header `name` (lower case) in a response head, trimmed.
fn header(head: &[u8], name: &str) -> Option<String> {
    let text = std::str::from_utf8(head).ok()?;
    text.split("\r\n").skip(1).find_map(|line| {
        let (k, v) = line.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().to_string())
            .filter(|v| !v.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_id_is_visible_ascii_within_its_bound_or_refused() {
        let answer = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"}}"#;
        let heard = |id: &str| Heard {
            session: Some(id.into()),
            media: Media::Other,
            body: answer.to_vec(),
        };
        let jwt = "eyJ".repeat(400);
        for ok in ["c1b35aa84f1a411aa72403d97d123bc3", jwt.as_str()] {
            let s = opened(200, true, &mut heard(ok)).unwrap();
            assert_eq!(s.id.as_deref(), Some(ok));
        }
        let long = "a".repeat(MAX_SESSION_ID + 1);
        for bad in ["a b", "a\u{7f}", "caf\u{e9}", long.as_str()] {
            let e = opened(200, true, &mut heard(bad)).unwrap_err();
            assert_eq!(e.class, Failure::Protocol, "{bad:?}");
            assert!(e.to_string().contains("Mcp-Session-Id"), "{e}");
        }
    }

    #[test]
    fn a_sessions_id_goes_into_each_requests_head() {
        let s = Session {
            id: Some("abc".into()),
            version: ASKED.into(),
            server: None,
        };
        let r = with_session(
            b"POST /mcp HTTP/1.1\r\nHost: h\r\n\r\n{\"a\":\"\r\n\r\n\"}",
            &s,
        );
        assert_eq!(
            &r[..],
            b"POST /mcp HTTP/1.1\r\nHost: h\r\nMcp-Session-Id: abc\r\n\r\n{\"a\":\"\r\n\r\n\"}"
        );
        let none = Session { id: None, ..s };
        assert_eq!(
            &with_session(b"GET / HTTP/1.1\r\n\r\n", &none)[..],
            b"GET / HTTP/1.1\r\n\r\n"
        );
    }

    #[test]
    fn a_post_carries_each_content_header_once() {
        let plan = Plan::new(crate::target::Target::parse("http://h/mcp").unwrap());
        let extra = vec![("Content-Type".to_string(), "application/json".to_string())];
        let r = post(&plan, extra, b"{}".to_vec());
        let head = String::from_utf8_lossy(&r).to_ascii_lowercase();
        assert_eq!(head.matches("content-type:").count(), 1, "{head}");
        assert_eq!(head.matches("accept:").count(), 1, "{head}");
    }

    #[test]
    fn the_session_header_is_found_in_any_case() {
        let head =
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nMCP-Session-ID:  f0 \r\n\r\n";
        assert_eq!(header(head, "mcp-session-id").as_deref(), Some("f0"));
        assert_eq!(header(b"HTTP/1.1 200 OK\r\n\r\n", "mcp-session-id"), None);
    }
}
