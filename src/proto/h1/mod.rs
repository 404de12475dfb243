//! HTTP/1.1 client side: sans-IO response parsing (head, body framing) and the lane that writes
//! prepared request bytes and reads one response. Must not allocate, lock or format per request.

mod body;
mod chunked;
mod head;
mod lane;
pub mod look;
mod memo;
#[doc(hidden)]
pub mod props;
mod response;
pub mod slow_lane;

pub use body::{Body, Decoded};
pub use chunked::Chunked;
pub use head::{Framing, Head, MAX_HEADERS, location, parse_head};
pub use lane::{Conn, Exchange, ReadSpace};
pub use memo::HeadMemo;
pub use response::{Progress, ResponseParser};

/// Largest response head (status line + headers) accepted before the response is rejected.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Why a response could not be parsed. Every variant is the server's fault, never ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("malformed response head: {0}")]
    Head(httparse::Error),
    /// The reply began with a TLS record: the port speaks TLS.
    #[error("the server answered in TLS: use https://")]
    TlsReply,
    /// The reply began with a NUL byte, as an HTTP/2 frame (its length) does.
    #[error("the server answered in binary frames, as HTTP/2 does: use --http2 (h2c)")]
    H2Reply,
    #[error("status code below 100")]
    Status,
    #[error("the server switched protocols (101), which spate did not ask for")]
    Switched,
    #[error("response head larger than {MAX_HEAD_BYTES} bytes")]
    HeadTooLarge,
    #[error("invalid Content-Length")]
    ContentLength,
    #[error("invalid chunk size line")]
    ChunkSize,
    #[error("chunk size does not fit in 64 bits")]
    ChunkSizeOverflow,
    #[error("missing CRLF in chunked body")]
    ChunkFraming,
    #[error("chunk extensions or trailers too long")]
    ChunkLineTooLong,
}
