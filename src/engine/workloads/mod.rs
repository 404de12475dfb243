//! What varies by feature beside the protocol: which request each attempt sends and how its
//! answer counts. A new workload goes here, as a type that implements `workload::Workload`.
//! Must not account for attempts (the loop does).
//!
//! - `workload`: `Workload`, whose every method defaults to the protocol's; `Fixed`, the
//!   static path; and `Work`, the one choice of workload a thread makes for all its slots.
//! - `list_lane`: `ListWork`, a request list (several URLs, `--urls-from-file`, MCP's calls);
//!   `answering`, the receiver that judges MCP's answers; `own_session`, a call in a session
//!   of its own over HTTP/2 and HTTP/3 (`--session per-request`).
//! - `called`: `spate grpc`'s receiver, which judges each call by its gRPC status.
//! - `script_lane`: `ScriptWork`, a script's `delay()`, `request()` and `response()`.
//! - `follow`, `away`, `hops`: --redirect, attempts that are redirect chains: on the slot's own
//!   connection at the run's origin, on connections of their own elsewhere, with the
//!   thread's hops built once.

pub(super) mod answering;
pub(super) mod away;
pub(super) mod called;
pub(super) mod follow;
pub(super) mod hops;
pub(super) mod list_lane;
pub(super) mod own_session;
pub(super) mod script_lane;
pub(super) mod workload;
