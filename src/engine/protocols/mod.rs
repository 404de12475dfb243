//! HOT: the transports a slot speaks, and how their connections open. A new protocol goes here,
//! as a type that implements `protocol::Protocol`. Must not account for attempts or choose
//! requests (the loop and the workloads do).
//!
//! - `protocol`: `Protocol` and `Sent` (the request an attempt sends), and the words the loop
//!   and the protocols share.
//! - `h1_lane`, `h2_lane`, `h3_lane`: HTTP/1.1; an HTTP/2 or HTTP/3 stream slot, whose
//!   connection the slots of its group share through a `crew`.
//! - `open`, `open_session`: a thread's connections as they open (TCP or a Unix socket, the
//!   tunnel, TLS, the HTTP/2 handshake, QUIC), and MCP's sessions on them.
//! - `watch`: `Observe`, what the engine asks of a response's receiver, and `Watch`, the
//!   receiver that measures streams (--stream).

pub(super) mod crew;
pub(super) mod h1_lane;
pub(super) mod h2_lane;
pub(super) mod h3_lane;
pub(super) mod open;
pub(super) mod open_session;
pub(super) mod protocol;
pub(super) mod watch;
