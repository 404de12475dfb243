//! `-v` under `spate mcp`: the handshake the server's revision needs, then the run's first call,
//! each request on a connection of its own in the version the run speaks and shown as any `-v`
//! exchange, and the session that `-v` opened ended after (DELETE). Over the legacy HTTP+SSE transport the session's stream
//! is opened first, and the endpoint and the answers are read from it. Must not count anything
//! of the run.

use std::fmt::Write as _;

use tokio::io::AsyncReadExt;

use super::{Heard, Payload, connect, h1, printable};
use crate::mcp::session::{Session, with_session};
use crate::mcp::{Handshake, Prepared, SessionMode, legacy};
use crate::plan::Plan;
use crate::proto::h1::Chunked;
use crate::reach::{LaneChoice, lane_choice};
use crate::route::Endpoint;

/// The most of a stream read while looking for one event.
const EVENT_MAX: usize = 64 * 1024;

pub(super) async fn show(
    plan: &Plan,
    endpoint: &Endpoint,
    prepared: &Prepared,
    call: &[u8],
    out: &mut String,
) -> Result<(), String> {
    let Some(h) = &prepared.handshake else {
        let _ = match prepared.session {
            SessionMode::Shared => writeln!(
                out,
                "* MCP {} ({}): the first call, in the run's session (opened before the run)",
                prepared.transport, prepared.version
            ),
            _ => writeln!(
                out,
                "* MCP {} ({}): the first call",
                prepared.transport, prepared.version
            ),
        };
        return ask(plan, endpoint, call, out).await.map(drop);
    };
    match &h.listen {
        None => streamable(plan, endpoint, prepared, h, call, out).await,
        Some(listen) => sse(plan, endpoint, h, listen, call, out).await,
    }
}

/// What `ask` heard of an answer: its status and the session's id.
struct Asked {
    status: Option<u16>,
    session: Option<String>,
}

/// One request (as HTTP/1.1 writes it) on a connection of its own, in the version the run
/// speaks: HTTP/1.1, HTTP/2 (forced or chosen by ALPN) or HTTP/3.
async fn ask(
    plan: &Plan,
    endpoint: &Endpoint,
    bytes: &[u8],
    out: &mut String,
) -> Result<Asked, String> {
    let t = &plan.target;
    let written = || {
        crate::request::written::read(bytes, t.scheme(), &t.authority())
            .map_err(|e| format!("an MCP request HTTP/2 and HTTP/3 cannot carry: {e}"))
    };
    let fields = match lane_choice(plan) {
        LaneChoice::Http3 => super::h3(plan, endpoint, written()?.h3(), out).await?,
        choice => {
            let (stream, alpn_h2) = connect(plan, endpoint, out).await?;
            if choice == LaneChoice::Http2 || (choice == LaneChoice::Alpn && alpn_h2) {
                super::h2(plan, written()?.h2(), stream, out).await?
            } else {
                let heard = h1(stream, bytes, out).await?;
                return Ok(Asked {
                    status: heard.status(),
                    session: heard.header("mcp-session-id"),
                });
            }
        }
    };
    Ok(Asked {
        status: Some(fields.status),
        session: fields.header("mcp-session-id"),
    })
}

/// One request on an HTTP/1.1 connection of its own, kept for what the server sends next on it
/// (the legacy transport's stream).
async fn ask_h1(
    plan: &Plan,
    endpoint: &Endpoint,
    bytes: &[u8],
    out: &mut String,
) -> Result<Heard, String> {
    let (stream, _) = connect(plan, endpoint, out).await?;
    h1(stream, bytes, out).await
}

fn success_h1(heard: &Heard, what: &str) -> Result<(), String> {
    success(
        &Asked {
            status: heard.status(),
            session: None,
        },
        what,
    )
}

fn success(asked: &Asked, what: &str) -> Result<(), String> {
    match asked.status {
        Some(s) if (200..300).contains(&s) => Ok(()),
        Some(s) => Err(format!("the server answered {what} with HTTP {s}")),
        None => Err(format!("the server's answer to {what} has no status")),
    }
}

/// Streamable HTTP with a session: initialize, notifications/initialized, the call, DELETE.
async fn streamable(
    plan: &Plan,
    endpoint: &Endpoint,
    prepared: &Prepared,
    h: &Handshake,
    call: &[u8],
    out: &mut String,
) -> Result<(), String> {
    let _ = writeln!(
        out,
        "* MCP {} ({}): the session's handshake, as each of the run's sessions makes it",
        prepared.transport, prepared.version
    );
    let init = ask(plan, endpoint, &h.initialize, out).await?;
    success(&init, "initialize")?;
    let session = Session {
        id: init.session.clone(),
        version: prepared.version.clone(),
        server: None,
    };
    ask(plan, endpoint, &with_session(&h.initialized, &session), out).await?;
    let _ = writeln!(out, "* the first call");
    let answered = ask(plan, endpoint, &with_session(call, &session), out).await;
    if session.id.is_some() && !h.delete.is_empty() {
        let _ = writeln!(out, "* ending this session");
        ask(plan, endpoint, &with_session(&h.delete, &session), out).await?;
    }
    answered.map(drop)
}

/// The legacy HTTP+SSE transport: the stream (GET), whose first event names the endpoint; then
/// initialize, notifications/initialized and the call POSTed there, each answer read from the
/// stream.
async fn sse(
    plan: &Plan,
    endpoint: &Endpoint,
    h: &Handshake,
    listen: &[u8],
    call: &[u8],
    out: &mut String,
) -> Result<(), String> {
    let _ = writeln!(
        out,
        "* MCP over the legacy HTTP+SSE transport ({}): the session's stream",
        legacy::VERSION
    );
    let heard = ask_h1(plan, endpoint, listen, out).await?;
    success_h1(&heard, "the stream's GET")?;
    let mut stream = Events::new(heard);
    // The GET's exchange showed the stream's first bytes, this event's among them.
    let named = stream.next(out, false).await?;
    let data = data_of(&named).ok_or("the stream's first event has no data")?;
    let target = legacy::endpoint_target(&h.url, &data)?;
    let _ = writeln!(
        out,
        "* the stream named the endpoint {}",
        super::term(&target)
    );
    for (what, bytes, answered) in [
        ("initialize", &h.initialize[..], true),
        ("notifications/initialized", &h.initialized[..], false),
        ("the first call", call, true),
    ] {
        let _ = writeln!(out, "* {what}");
        let posted = ask_h1(plan, endpoint, &legacy::retarget(bytes, &target), out).await?;
        success_h1(&posted, what)?;
        if answered {
            let _ = writeln!(out, "* its answer, on the stream");
            stream.next(out, true).await?;
        }
    }
    Ok(())
}

/// The `data` of an event (its lines joined), if it has any.
fn data_of(event: &str) -> Option<String> {
    let lines: Vec<&str> = event
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|v| v.strip_prefix(' ').unwrap_or(v))
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// A response body read as an event stream: chunked framing undone, events split at blank
/// lines.
struct Events {
    heard: Heard,
    /// The body's chunked framing, when it has one.
    chunked: Option<Chunked>,
    /// Bytes read, not yet unframed.
    raw: Vec<u8>,
    /// The body, not yet split into events.
    body: Vec<u8>,
}

impl Events {
    fn new(heard: Heard) -> Events {
        let chunked = heard.chunked().then(Chunked::new);
        let raw = heard.rest().to_vec();
        Events {
            heard,
            chunked,
            raw,
            body: Vec::new(),
        }
    }

    /// Moves what has come of the body from `raw` to `body`, chunked framing undone.
    fn unframe(&mut self) -> Result<(), String> {
        let Some(chunked) = self.chunked.as_mut() else {
            self.body.append(&mut self.raw);
            return Ok(());
        };
        let mut payload = Payload(Vec::new());
        let (used, _) = chunked
            .decode_to(&self.raw, &mut payload)
            .map_err(|e| format!("the stream's chunked framing is broken ({e})"))?;
        self.raw.drain(..used);
        self.body.extend_from_slice(&payload.0);
        Ok(())
    }

    /// The next event (shown, if `show`), skipping comments and events without data.
    async fn next(&mut self, out: &mut String, show: bool) -> Result<String, String> {
        loop {
            self.unframe()?;
            let blank = [&b"\r\n\r\n"[..], b"\n\n"]
                .iter()
                .filter_map(|sep| {
                    let at = self.body.windows(sep.len()).position(|w| w == *sep)?;
                    Some((at, sep.len()))
                })
                .min();
            if let Some((at, len)) = blank {
                let event = String::from_utf8_lossy(&self.body[..at]).replace("\r\n", "\n");
                self.body.drain(..at + len);
                if data_of(&event).is_some() {
                    if show {
                        let _ = writeln!(out, "< {}", printable(event.as_bytes()));
                    }
                    return Ok(event);
                }
                continue;
            }
            if self.chunked.is_some_and(|c| c.is_done()) {
                return Err("the server ended the stream".into());
            }
            if self.body.len() + self.raw.len() > EVENT_MAX {
                return Err("an event of the stream is over 64 KiB".into());
            }
            let mut buf = [0u8; 4096];
            match self.heard.stream.read(&mut buf).await {
                Ok(0) => return Err("the server closed the stream".into()),
                Ok(n) => self.raw.extend_from_slice(&buf[..n]),
                Err(e) => return Err(format!("reading the stream: {e}")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::data_of;

    #[test]
    fn an_events_data_is_its_data_lines() {
        assert_eq!(
            data_of("event: endpoint\ndata: /messages/?session_id=1"),
            Some("/messages/?session_id=1".into())
        );
        assert_eq!(data_of(": ping"), None);
        assert_eq!(data_of("data:a\ndata: b"), Some("a\nb".into()));
    }
}
