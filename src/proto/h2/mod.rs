//! HOT: the HTTP/2 client lane on the h2 crate: the handshake with our window and frame
//! settings, and one request/response on an open connection: `send` queues the prepared head
//! and body, `receive` reads the response and releases flow-control capacity at once. The same
//! shape as `proto::h1`, so the engine drives both the same way.

mod counted;

use crate::clock::Tick;
use std::future::poll_fn;

use bytes::Bytes;
use h2::client::{self, Connection, ResponseFuture, SendRequest};
use h2::{Ping, PingPong};
use http::{HeaderMap, Method, Request, Uri};

pub use counted::{Counted, Counters, TlsFailure};

use crate::net::Stream;
use crate::proto::{Cause, Fail, Response};
use crate::stats::Failure;

/// The I/O under an HTTP/2 connection: the stream, with its bytes counted.
pub type Io = Counted<Stream>;

/// What we advertise in SETTINGS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub stream_window: u32,
    pub conn_window: u32,
    pub max_frame: u32,
}

/// The request as HTTP/2 needs it, built once: h2 takes an owned head per request, made from
/// these parts; the body is shared, never copied. The default is a placeholder for runs that
/// cannot speak HTTP/2.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    pub method: Method,
    pub uri: Uri,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Prepared {
    fn head(&self) -> Request<()> {
        let mut r = Request::new(());
        *r.method_mut() = self.method.clone();
        *r.uri_mut() = self.uri.clone();
        *r.headers_mut() = self.headers.clone();
        r
    }
}

/// Opens HTTP/2 on `io` (prior knowledge, or after ALPN h2). The returned `Connection` must be
/// polled for anything to happen.
pub async fn handshake(
    io: Io,
    s: Settings,
) -> Result<(SendRequest<Bytes>, Connection<Io, Bytes>), Fail> {
    client::Builder::new()
        .initial_window_size(s.stream_window)
        .initial_connection_window_size(s.conn_window)
        .max_frame_size(s.max_frame)
        // The same limit as an HTTP/1.1 head: a server cannot make spate hold megabytes of
        // headers per stream (h2's default is 16 MiB).
        .max_header_list_size(crate::proto::h1::MAX_HEAD_BYTES as u32)
        // One stream until the server's SETTINGS say how many it allows: a server with a
        // limit of 1 must never see two.
        .initial_max_send_streams(1)
        .enable_push(false)
        .handshake(io)
        .await
        .map_err(Fail::h2)
}

/// Waits for one PING round trip. Servers send their SETTINGS before anything else, so
/// afterwards `SendRequest::current_max_send_streams` holds the server's limit. The connection
/// must be polled meanwhile.
pub async fn settle(mut ping: PingPong) -> Result<(), Fail> {
    ping.ping(Ping::opaque())
        .await
        .map(|_| ())
        .map_err(Fail::h2)
}

/// Queues the request's head and body on a `SendRequest` that is ready (see `SendRequest::ready`).
pub async fn send(sender: &mut SendRequest<Bytes>, req: &Prepared) -> Result<ResponseFuture, Fail> {
    let end = req.body.is_empty();
    let (response, mut body) = sender.send_request(req.head(), end).map_err(Fail::h2)?;
    let mut rest = req.body.clone();
    while !rest.is_empty() {
        body.reserve_capacity(rest.len());
        let granted = poll_fn(|cx| body.poll_capacity(cx))
            .await
            .ok_or(Fail {
                class: Failure::H2,
                cause: Cause::Other("stream closed while sending the body"),
            })?
            .map_err(Fail::h2)?;
        let chunk = rest.split_to(granted.min(rest.len()));
        body.send_data(chunk, rest.is_empty()).map_err(Fail::h2)?;
    }
    Ok(response)
}

/// Reads the response to a request queued by `send`.
pub async fn receive(response: ResponseFuture) -> Result<Response, Fail> {
    let response = response.await.map_err(Fail::h2)?;
    let first_byte = Tick::now();
    let status = response.status().as_u16();
    let mut body = response.into_body();
    let mut body_bytes = 0u64;
    while let Some(chunk) = body.data().await {
        let chunk = chunk.map_err(Fail::h2)?;
        body_bytes += chunk.len() as u64;
        // Give the window back at once, so that flow control never throttles the server.
        let _ = body.flow_control().release_capacity(chunk.len());
    }
    Ok(Response {
        status,
        keep_alive: true,
        body_bytes,
        bytes_in: 0,
        first_byte: Some(first_byte),
        done: Tick::now(),
    })
}
