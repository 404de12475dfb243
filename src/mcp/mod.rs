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
    /// How calls and sessions go together (`--session`).
    pub session: SessionMode,
    /// `--session shared`: how long the run's one handshake took, ns (made before the run).
    pub shared_handshake_ns: Option<u64>,
}

/// How calls and sessions go together (`--session`), in the revisions with sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SessionMode {
    /// Each connection opens a session and keeps it.
    #[default]
    PerConnection,
    /// One session for the run, opened before it; every connection's calls carry it.
    Shared,
    /// Each call opens a session on a connection of its own and ends it after its answer.
    PerRequest,
}

impl SessionMode {
    pub fn name(self) -> &'static str {
        match self {
            SessionMode::PerConnection => "per-connection",
            SessionMode::Shared => "shared",
            SessionMode::PerRequest => "per-request",
        }
    }
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
    /// The DELETE that ends a session, without its id (Streamable HTTP).
    pub delete: bytes::Bytes,
}

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
