//! What varies by feature beside the protocol: which request each attempt sends and how its
//! answer counts. A new workload goes here, as a type that implements `workload::Workload`.
//! Must not account for attempts (the loop does).
//!
//! - `workload`: `Workload`, whose every method defaults to the protocol's, and `Fixed`, the
//!   static path.
//! - `list_lane`: `ListWork`, a request list (several URLs, `--urls-from-file`, MCP's calls);
//!   `answering`, the receiver that judges MCP's answers.
//! - `script_lane`: `ScriptWork`, a script's `delay()`, `request()` and `response()`.
//! - `follow`, `hops`: --redirect, a connection whose attempts are redirect chains (over
//!   HTTP/1.1), and the thread's hops built once.

pub(super) mod answering;
pub(super) mod follow;
pub(super) mod hops;
pub(super) mod list_lane;
pub(super) mod script_lane;
pub(super) mod workload;
