//! The MCP part of a request list, as plain data: each call's own headers, its row in the
//! report, the order that gives each call its weight, what the probe learnt of the server and
//! the handshake a session needs. Built by `mcp` before the run; read by the engine (the
//! requests, the sessions), `request_list` and `stats` (the rows). Must not import `mcp`: the
//! data goes down, the building stays up.

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
    /// Places of the list, each as often as its weight (`mcp::call::schedule`).
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
    /// Each slot's calls take JSON-RPC ids of their own in the session (`wire::with_id`), since
    /// several slots' calls are in flight in one session: `--session shared`, or a
    /// connection's streams (HTTP/2, HTTP/3). The list's requests then carry ids of one width.
    pub slot_ids: bool,
}

impl Prepared {
    /// Whether the calls go in sessions (a revision with a handshake, or `--session shared`);
    /// without, each call stands alone (the stateless revision).
    pub fn has_sessions(&self) -> bool {
        self.handshake.is_some() || self.shared_handshake_ns.is_some()
    }
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
