//! HTTP/3 on h3 over quinn: the request built once, the HTTP/3 setup of a QUIC connection, one
//! exchange on a request stream, and what a stream or connection error means for the report.
//! Must not hold connection state or account for anything: the lane (`engine::h3_lane`) does.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use bytes::{Buf, Bytes};
use h3::error::{Code, ConnectionError, StreamError};

use super::{Cause, Events, Fail, Media, Response};
use crate::clock::Tick;
use crate::net::quic;
use crate::proto::Failure;

/// What starts requests on one HTTP/3 connection (a handle: clones share the connection).
pub type Sender = h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;

/// What keeps one HTTP/3 connection's control streams going: polled until the connection ends.
pub type Driver = h3::client::Connection<h3_quinn::Connection, Bytes>;

/// The cause of an attempt the server turned away because it is closing the connection
/// (GOAWAY): it was not processed, and goes again on the next connection.
pub const GOING_AWAY: &str =
    "the server is closing the connection (GOAWAY): sent again on a new one";

/// The cause of an attempt the server reset with H3_REQUEST_REJECTED, which promises that it
/// did nothing with it (RFC 9114, 4.1.1): it goes again.
pub const REJECTED: &str = "the server rejected the request unprocessed (H3_REQUEST_REJECTED)";

/// The run's request as HTTP/3 sends it, built once.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: http::Method,
    pub uri: http::Uri,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

impl Request {
    /// The request's head as the http crate holds it (what h3 and h2 send).
    pub fn message(&self) -> http::Request<()> {
        let mut r = http::Request::new(());
        *r.method_mut() = self.method.clone();
        *r.uri_mut() = self.uri.clone();
        *r.headers_mut() = self.headers.clone();
        r
    }
}

/// HTTP/3 on the QUIC connection `conn`: the control stream and SETTINGS.
pub async fn start(conn: quinn::Connection) -> Result<(Driver, Sender), Fail> {
    let quic = conn.clone();
    h3::client::builder()
        // No GREASE: a load test sends what it measures and nothing more.
        .send_grease(false)
        .build(h3_quinn::Connection::new(conn))
        .await
        .map_err(|e| connection_fail(&e, &quic))
}

/// One request and its whole response on a new stream of `send`'s connection `quic`. `written`
/// is set once the request was handed over in full; `events` is told the response as it
/// arrives (its head, as HTTP/1.1 writes one, only to a receiver that reads it).
pub async fn exchange<E: Events>(
    mut send: Sender,
    quic: quinn::Connection,
    request: Arc<Request>,
    written: Rc<Cell<Option<Tick>>>,
    events: Rc<RefCell<E>>,
) -> Result<Response, Fail> {
    let fail = |e: StreamError| stream_fail(e, &quic);
    let mut stream = send.send_request(request.message()).await.map_err(fail)?;
    if !request.body.is_empty() {
        stream.send_data(request.body.clone()).await.map_err(fail)?;
    }
    stream.finish().await.map_err(fail)?;
    written.set(Some(Tick::now()));
    let head = stream.recv_response().await.map_err(fail)?;
    let first_byte = Tick::now();
    let status = head.status().as_u16();
    {
        let mut e = events.borrow_mut();
        e.read_at(first_byte);
        if E::HEADS {
            e.head_bytes(&head_bytes(&head));
        }
        let media = head
            .headers()
            .get(http::header::CONTENT_TYPE)
            .map_or(Media::Other, |v| Media::of(v.as_bytes()));
        e.head(status, media);
    }
    let mut body_bytes = 0u64;
    // A receiver that has seen enough (a cap of --stream) ends the response as it stands;
    // dropping the stream resets it, and the connection goes on.
    while !events.borrow().enough()
        && let Some(mut chunk) = stream.recv_data().await.map_err(fail)?
    {
        let mut e = events.borrow_mut();
        e.read_at(Tick::now());
        while chunk.has_remaining() {
            let piece = chunk.chunk();
            body_bytes += piece.len() as u64;
            e.data(piece);
            let n = piece.len();
            chunk.advance(n);
        }
    }
    Ok(Response {
        status,
        keep_alive: true,
        body_bytes,
        // Bytes are counted per connection, from QUIC's own figures.
        bytes_in: 0,
        first_byte: Some(first_byte),
        done: Tick::now(),
    })
}

/// A response head as HTTP/1.1 writes one (a status line, then each field), for a receiver
/// that reads the fields.
fn head_bytes(head: &http::Response<()>) -> Vec<u8> {
    let mut out = format!("HTTP/3 {}\r\n", head.status().as_u16()).into_bytes();
    for (name, value) in head.headers() {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// What a failed stream means: a reset by the server, a refusal to go again, or the end of
/// its connection (told by QUIC's own reason when QUIC has one).
fn stream_fail(e: StreamError, quic: &quinn::Connection) -> Fail {
    match e {
        StreamError::RemoteTerminate { code, .. } if code == Code::H3_REQUEST_REJECTED => Fail {
            class: Failure::Reset,
            cause: Cause::Refused(REJECTED),
        },
        StreamError::RemoteTerminate { code, .. } => Fail {
            class: Failure::Reset,
            cause: Cause::Message(format!("the server reset the stream with {code}")),
        },
        StreamError::RemoteClosing { .. } => Fail {
            class: Failure::Reset,
            cause: Cause::Refused(GOING_AWAY),
        },
        StreamError::ConnectionError { 0: e, .. } => connection_fail(&e, quic),
        StreamError::HeaderTooBig {
            actual_size,
            max_size,
            ..
        } => Fail {
            class: Failure::H3,
            cause: Cause::Message(format!(
                "a header section of {actual_size} bytes, over the limit of {max_size}"
            )),
        },
        other => match quic.close_reason() {
            Some(reason) => closed(&reason),
            None => Fail {
                class: Failure::H3,
                cause: Cause::Message(other.to_string()),
            },
        },
    }
}

/// What the end of a connection means for the attempts on it.
fn connection_fail(e: &ConnectionError, quic: &quinn::Connection) -> Fail {
    match quic.close_reason() {
        Some(reason) => closed(&reason),
        None => Fail {
            class: Failure::H3,
            cause: Cause::Message(format!("HTTP/3: {e}")),
        },
    }
}

/// A QUIC connection's end, by its class: TLS, a close without error, or an HTTP/3 or QUIC
/// error.
pub fn closed(reason: &quinn::ConnectionError) -> Fail {
    let class = if quic::is_tls(reason) {
        Failure::Tls
    } else if quic::is_graceful(reason)
        || matches!(
            reason,
            quinn::ConnectionError::TimedOut | quinn::ConnectionError::Reset
        )
    {
        Failure::Closed
    } else {
        Failure::H3
    };
    Fail {
        class,
        cause: Cause::Message(quic::ended(reason)),
    }
}
