//! MCP (Model Context Protocol) tool servers under load: what is called (`call`), the requests
//! of the Streamable HTTP transport (`wire`), how a server's answer is judged (`rpc`, `body`),
//! the probe that lists a server's tools before a run (`probe`, on its own `client`) and the
//! sessions of the revisions with a handshake (`session`). The engine sends the
//! requests as a request list and judges each answer with `body::Reader`. Must not know the
//! engine's loop or the report.

pub mod body;
pub mod call;
mod client;
pub mod legacy;
pub mod plan;
pub mod probe;
mod probe_sse;
pub mod rpc;
pub mod session;
pub mod wire;

/// What an MCP run adds to its request list: each request's own headers, the report row it
/// counts in (requests of one tool share a row), the rows' names, the order that gives each
/// call its weight, and what the probe learnt of the server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Prepared {
    /// Per request of the list: headers after the user's.
    pub headers: Vec<Vec<(String, String)>>,
    /// Per request of the list: its row.
    pub rows: Vec<u16>,
    /// Per row: what the report calls it.
    pub labels: Vec<String>,
    /// Places of the list, each as often as its weight (`call::schedule`).
    pub schedule: std::sync::Arc<[u16]>,
    /// The transport and protocol revision the requests use.
    pub transport: String,
    pub version: String,
    /// The server's name and version, when it said.
    pub server: Option<String>,
    /// A revision with a handshake: each connection opens a session with these requests
    /// (`notifications/initialized` without the session's id, which each session adds).
    pub handshake: Option<Handshake>,
}

/// The requests of a connection's handshake, built once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handshake {
    pub initialize: bytes::Bytes,
    pub initialized: bytes::Bytes,
    /// The legacy HTTP+SSE transport: the GET that opens each session's stream (the other
    /// requests go to the endpoint it names).
    pub listen: Option<bytes::Bytes>,
    /// The URL the stream's endpoint is resolved against.
    pub url: String,
}

/// The JSON-RPC id of the list's request `i`: built once, and only one call is in flight on a
/// connection, so an id per request is enough to match its answer.
pub fn id_of(i: usize) -> u64 {
    i as u64 + 1
}
