//! Wire protocols: sans-IO parsers and the per-protocol lanes that drive one connection, and
//! `Failure`, the classes of how an attempt ended, which `stats` counts. Must not import
//! `engine`, `stats`, `report`, `ui` or `cli`: protocols know bytes and sockets, not runs.

mod failure;
pub mod grpc;
pub mod h1;
pub mod h2;
pub mod h3;
pub mod sse;
pub mod stream;

use std::fmt;
use std::io;

use crate::clock::Tick;
use crate::net::{describe_tls, describe_tls_io, tls_cause};
pub use failure::{Failure, is_fd_exhaustion};

/// What a lane reports of a response while it reads it, for what needs more than the counted
/// [`Response`]: streaming metrics now; scripts and MCP later. The lane drives, the receiver
/// receives; every method does nothing unless the receiver wants it. The static path passes
/// `()`, whose calls compile to nothing, so a run that ignores the body pays nothing for it.
pub trait Events {
    /// Whether the receiver's owner follows the response read by read (an idle timeout runs
    /// from the last read): an HTTP/2 stream's task is then woken at each frame of its response,
    /// not only at its end.
    const WATCHES: bool = false;
    /// Bytes of the response were read at `at`: what `head` and `data` report next came in them.
    #[inline(always)]
    fn read_at(&mut self, _at: Tick) {}
    /// Whether the receiver wants each final head's bytes (`head_bytes`): a script's
    /// `response()` reads its header fields. The parser hands them over only then.
    const HEADS: bool = false;
    /// The bytes of the final head, status line to blank line, before `head` reports it.
    #[inline(always)]
    fn head_bytes(&mut self, _head: &[u8]) {}
    /// Whether the receiver wants each header field of the final head and of the trailers
    /// (`field`): gRPC's status is in them. HTTP/2 hands them over, only then; HTTP/1.1 has no
    /// receiver that asks (its heads go whole through `head_bytes`).
    const FIELDS: bool = false;
    /// A field of the final head (before `head` reports it) or of the trailers (before the
    /// response completes); pseudo-fields (`:status`) are not among them.
    #[inline(always)]
    fn field(&mut self, _name: &[u8], _value: &[u8]) {}
    /// The final head arrived, with this status and the kind of body its Content-Type names
    /// (interim 1xx heads are not reported).
    #[inline(always)]
    fn head(&mut self, _status: u16, _media: Media) {}
    /// Payload of the body, chunk framing removed, in the order it arrived.
    #[inline(always)]
    fn data(&mut self, _bytes: &[u8]) {}
    /// The receiver has seen enough of this response (a cap): the lane stops reading it and
    /// reports it as it stands, and the connection does not carry another request.
    #[inline(always)]
    fn enough(&self) -> bool {
        false
    }
}

/// Ignores everything.
impl Events for () {}

/// The kind of body a response's Content-Type names, as far as streaming cares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Media {
    #[default]
    Other,
    /// `text/event-stream`: server-sent events.
    EventStream,
    /// JSON lines: `application/x-ndjson`, `application/jsonl` and their aliases.
    JsonLines,
}

impl Media {
    /// The kind a Content-Type value names: its type and subtype, parameters ignored, in any
    /// case.
    pub fn of(content_type: &[u8]) -> Media {
        let essence = content_type
            .split(|&b| b == b';')
            .next()
            .unwrap_or_default()
            .trim_ascii();
        let is = |name: &[u8]| essence.eq_ignore_ascii_case(name);
        if is(b"text/event-stream") {
            Media::EventStream
        } else if [
            &b"application/x-ndjson"[..],
            b"application/ndjson",
            b"application/jsonl",
            b"application/x-jsonlines",
            b"application/jsonlines",
            b"application/json-lines",
        ]
        .iter()
        .any(|n| is(n))
        {
            Media::JsonLines
        } else {
            Media::Other
        }
    }
}

/// One response, read in full, as both lanes report it.
#[derive(Debug, Clone, Copy)]
pub struct Response {
    pub status: u16,
    /// Whether the connection may carry another request (always true for HTTP/2 streams).
    pub keep_alive: bool,
    pub body_bytes: u64,
    /// HTTP/1.1: bytes of the response on the wire, head included. HTTP/2 counts bytes per
    /// connection instead (frames of all streams), so 0 here.
    pub bytes_in: u64,
    /// When the first byte (HTTP/2: the response head) arrived; `None` when the whole response
    /// had already arrived before the request was written.
    pub first_byte: Option<Tick>,
    pub done: Tick,
}

/// A failed request attempt as a lane reports it: the class that is counted, and the cause that
/// becomes the class's example message (formatted only for the first of each class).
#[derive(Debug)]
pub struct Fail {
    pub class: Failure,
    pub cause: Cause,
}

#[derive(Debug)]
pub enum Cause {
    Io(io::Error),
    Parse(h1::ParseError),
    /// A plain message (a protocol rule spate enforces itself).
    Other(&'static str),
    /// A message kept from an error that could not be passed on whole.
    Message(String),
    /// The server closed the connection before the response was complete.
    Eof,
    /// HTTP/2: the server refused the stream before processing it (a graceful GOAWAY below its
    /// id, or one that came before it was sent), so sending it again is safe.
    Refused(&'static str),
}

impl Fail {
    /// A socket error while reading or writing: a close by the peer is `Closed`, others `other`.
    pub fn io(other: Failure, e: io::Error) -> Fail {
        if tls_cause(&e).is_some() {
            return Fail {
                class: Failure::Tls,
                cause: Cause::Io(e),
            };
        }
        let class = match e.kind() {
            io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::UnexpectedEof => Failure::Closed,
            _ => other,
        };
        Fail {
            class,
            cause: Cause::Io(e),
        }
    }

    pub fn parse(e: h1::ParseError) -> Fail {
        Fail {
            class: Failure::Parse,
            cause: Cause::Parse(e),
        }
    }

    /// Whether the server refused the request unprocessed, so that it may be sent again.
    pub fn refused(&self) -> bool {
        matches!(self.cause, Cause::Refused(_))
    }

    pub fn eof() -> Fail {
        Fail {
            class: Failure::Closed,
            cause: Cause::Eof,
        }
    }
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.cause {
            Cause::Io(e) => match tls_cause(e) {
                Some(t) => f.write_str(&describe_tls(t)),
                None => match describe_tls_io(e, false) {
                    Some(words) => f.write_str(&words),
                    None => write!(f, "{e}"),
                },
            },
            Cause::Parse(e) => write!(f, "{e}"),
            Cause::Other(m) => f.write_str(m),
            Cause::Message(m) => f.write_str(m),
            Cause::Eof => f.write_str("connection closed before the response was complete"),
            Cause::Refused(m) => f.write_str(m),
        }
    }
}
