//! MCP (Model Context Protocol) tool servers under load: what is called (`call`), the requests
//! of the Streamable HTTP transport (`wire`), how a server's answer is judged (`rpc`, `body`),
//! the probe that lists a server's tools before a run (`probe`, on its own `client`) and the
//! sessions of the revisions with a handshake (`session`), and a run's plan made of them
//! (`stage`). The engine sends the requests as a request list and judges each answer with
//! `body::Reader`. Must not know the engine's loop or the report.

pub mod body;
pub mod call;
mod client;
pub mod inbox;
pub mod legacy;
pub mod plan;
pub mod probe;
mod probe_sse;
pub mod rpc;
pub mod session;
pub mod shared;
pub mod stage;
pub mod wire;

pub use crate::calls::{Handshake, Prepared, SessionMode};

/// The JSON-RPC id of the list's request `i`: built once, and only one call is in flight on a
/// connection, so an id per request is enough to match its answer.
pub fn id_of(i: usize) -> u64 {
    i as u64 + 1
}

/// `--session shared`: ids of one width (ten digits), so that each connection's requests can
/// take ids of their own in place (`wire::with_id`) without changing a length. A session's
/// requests in flight must have distinct ids, and all connections share the session.
pub const SHARED_IDS: u64 = 1_000_000_000;

/// `--session shared`: the first id of the requests of slot `slot` (counted over the run's
/// threads); its request `i` has this id plus `i`.
pub fn shared_first_id(slot: usize) -> u64 {
    SHARED_IDS + (slot as u64 % 8_000_000) * call::MAX_CALLS as u64
}
