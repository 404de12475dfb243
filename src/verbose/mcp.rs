//! `-v` under `spate mcp`: the handshake the server's revision needs, then the run's first call,
//! each request on a connection of its own in the version the run speaks and shown as any `-v`
//! exchange, and the session that `-v` opened ended after (DELETE). Over the legacy HTTP+SSE transport the session's stream
//! is opened first, and the endpoint and the answers are read from it. Must not count anything
//! of the run.

use std::fmt::Write as _;

use bytes::Buf as _;
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

/// The legacy transport's stream: its GET (as HTTP/1.1 writes it) on a connection of its own in
/// the version the run speaks, answered 2xx, its body kept to read.
async fn open_stream(
    plan: &Plan,
    endpoint: &Endpoint,
    bytes: &[u8],
    out: &mut String,
) -> Result<Source, String> {
    let what = "the stream's GET";
    let t = &plan.target;
    let written = || {
        crate::request::written::read(bytes, t.scheme(), &t.authority())
            .map_err(|e| format!("an MCP request HTTP/2 and HTTP/3 cannot carry: {e}"))
    };
    let ok = |status| {
        success(
            &Asked {
                status,
                session: None,
            },
            what,
        )
    };
    if lane_choice(plan) == LaneChoice::Http3 {
        let (fields, stream) = super::h3_open(plan, endpoint, written()?.h3(), out).await?;
        ok(Some(fields.status))?;
        return Ok(Source::H3(Box::new(stream)));
    }
    let choice = lane_choice(plan);
    let (stream, alpn_h2) = connect(plan, endpoint, out).await?;
    if choice == LaneChoice::Http2 || (choice == LaneChoice::Alpn && alpn_h2) {
        let (fields, body) = super::h2_open(plan, written()?.h2(), None, stream, out).await?;
        ok(Some(fields.status))?;
        return Ok(Source::H2(body));
    }
    let heard = h1(stream, bytes, out).await?;
    ok(heard.status())?;
    let chunked = heard.chunked().then(Chunked::new);
    Ok(Source::H1(heard, chunked))
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
    let mut stream = Events::new(open_stream(plan, endpoint, listen, out).await?);
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
        let posted = ask(plan, endpoint, &legacy::retarget(bytes, &target), out).await?;
        success(&posted, what)?;
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

/// A response body read as an event stream: the protocol's framing undone, events split at
/// blank lines.
struct Events {
    source: Source,
    /// Bytes read, not yet unframed (HTTP/1.1).
    raw: Vec<u8>,
    /// The body, not yet split into events.
    body: Vec<u8>,
}

/// Where the stream's body comes from.
enum Source {
    /// An HTTP/1.1 connection, and the body's chunked framing when it has one.
    H1(Heard, Option<Chunked>),
    H2(h2::RecvStream),
    H3(Box<super::H3Stream>),
}

impl Events {
    fn new(source: Source) -> Events {
        let raw = match &source {
            Source::H1(heard, _) => heard.rest().to_vec(),
            _ => Vec::new(),
        };
        Events {
            source,
            raw,
            body: Vec::new(),
        }
    }

    /// Moves what has come of the body from `raw` to `body`, chunked framing undone.
    fn unframe(&mut self) -> Result<(), String> {
        let Source::H1(_, Some(chunked)) = &mut self.source else {
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

    /// Reads more of the stream into `raw`.
    async fn read(&mut self) -> Result<(), String> {
        let ended = || Err("the server ended the stream".to_string());
        match &mut self.source {
            Source::H1(_, Some(c)) if c.is_done() => ended(),
            Source::H1(heard, _) => {
                let mut buf = [0u8; 4096];
                match heard.stream.read(&mut buf).await {
                    Ok(0) => Err("the server closed the stream".into()),
                    Ok(n) => {
                        self.raw.extend_from_slice(&buf[..n]);
                        Ok(())
                    }
                    Err(e) => Err(format!("reading the stream: {e}")),
                }
            }
            Source::H2(body) => match body.data().await {
                Some(Ok(data)) => {
                    let _ = body.flow_control().release_capacity(data.len());
                    self.raw.extend_from_slice(&data);
                    Ok(())
                }
                Some(Err(e)) => Err(format!("reading the stream: {e}")),
                None => ended(),
            },
            Source::H3(h3) => match h3.stream.recv_data().await {
                Ok(Some(mut data)) => {
                    while data.has_remaining() {
                        let n = data.chunk().len();
                        self.raw.extend_from_slice(data.chunk());
                        data.advance(n);
                    }
                    Ok(())
                }
                Ok(None) => ended(),
                Err(e) => Err(format!("reading the stream: HTTP/3: {e}")),
            },
        }
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
            if self.body.len() + self.raw.len() > EVENT_MAX {
                return Err("an event of the stream is over 64 KiB".into());
            }
            self.read().await?;
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
