//! HOT: runs a `Plan`: resolves the target once, starts one OS thread per `--threads` (each a
//! tokio current-thread runtime), pre-connects every connection before the clock starts, then
//! releases all threads at once and merges their `Stats` when they finish. Never prints.
//!
//! The map, by concern:
//! - `run`: the threads, their start and end (`prepare`, `Armed::go`).
//! - `admit`: when attempts start (the stop rule, the open model's pacer, back-offs).
//! - `slots`: the one loop each slot runs, `Link<P, W>`, its accounting and the thread's tasks.
//! - `protocols`: the transports (`Protocol`: HTTP/1.1, HTTP/2, HTTP/3) and how connections
//!   open.
//! - `workloads`: what varies by feature (`Workload`: a request list, a script, redirects).

mod admit;
mod protocols;
mod run;
mod slots;
mod workloads;

use std::time::Duration;

use crate::net::TlsSetupError;
use crate::plan::{Plan, PlanError};
use crate::reach::{lane_choice, quic_client, tls_client};
use crate::stats::{Failure, NotOpened, RunOutput};
use run::thread::Finished;

pub use run::armed::{Armed, prepare, prepare_staged};
pub use run::control::Control;
pub use run::limits::raise_nofile;

/// Checks that `sockets` fit under the open-file limit; `Err` is the line that says how to make
/// room for `-c connections`.
pub fn check_nofile(sockets: u32, threads: u32, connections: u32) -> Result<(), String> {
    run::limits::check(sockets, threads)
        .map_err(|(needed, l)| run::limits::advice(connections, needed, l))
}

/// Connects in flight at once across all threads while pre-connecting.
pub const CONNECT_CONCURRENCY: usize = 256;

/// Longest wait for in-flight requests after the deadline of a duration run (capped by the
/// request timeout). Whatever is still in flight then is counted as interrupted.
pub const MAX_DRAIN: Duration = Duration::from_secs(1);

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Resolve(#[from] crate::route::RouteError),
    #[error("cannot connect to {target}: {reason}")]
    Unreachable {
        target: String,
        class: Failure,
        reason: String,
    },
    #[error("TLS: {0}")]
    Tls(#[from] TlsSetupError),
    #[error("cannot build the HTTP/2 request: {0}")]
    Request(String),
    /// The plan needs more open files than the limit allows (the line says how to raise it).
    #[error("{0}")]
    FileLimit(String),
    #[error("cannot start the load threads: {0}")]
    Threads(std::io::Error),
    /// The script failed (its message names the file and line).
    #[error("{0}")]
    Script(String),
    /// `--start-deadline`: the connections were ready too long after `--start-at`.
    #[error(
        "ready {} after --start-at, later than --start-deadline {} allows: nothing was sent",
        crate::numbers::millis(late.as_secs_f64() * 1e3),
        crate::numbers::millis(deadline.as_secs_f64() * 1e3)
    )]
    Late { late: Duration, deadline: Duration },
}

impl RunError {
    /// A stable word for the kind of failure, for programs (the JSON's `error.kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            RunError::Plan(_) => "plan",
            RunError::Resolve(_) => "resolve",
            RunError::Unreachable { .. } => "unreachable",
            RunError::Tls(_) => "tls_setup",
            RunError::Request(_) => "request",
            RunError::FileLimit(_) => "file_limit",
            RunError::Threads(_) => "threads",
            RunError::Script(_) => "script",
            RunError::Late { .. } => "late",
        }
    }
}

/// Runs `plan` to its end, with no display and no way to stop it early.
pub fn run(plan: &Plan) -> Result<RunOutput, RunError> {
    run_with(plan, None, &Control::new())
}

/// Runs `plan`, with `script` (the one it names, loaded; `None` for a plan without one);
/// `control` can stop it early and carries the live views for a display.
pub fn run_with(
    plan: &Plan,
    script: Option<&crate::script::Loaded>,
    control: &Control,
) -> Result<RunOutput, RunError> {
    prepare(plan, script, control)?.go()
}

/// How often the wait for load threads that run a script's Lua looks whether to interrupt it.
pub(super) const LUA_WATCH: Duration = Duration::from_millis(10);

/// `join`, for a run whose load threads run a script's Lua: once the run is over (`due` says
/// so: the drain's end passed, or Ctrl-C) and a thread has not ended, its Lua is interrupted
/// (`script::interrupt`), again every `LUA_WATCH` until every thread has ended.
fn join_watched(
    handles: Vec<std::thread::JoinHandle<std::io::Result<Finished>>>,
    due: impl Fn() -> bool,
) -> Result<Vec<Finished>, RunError> {
    use std::os::unix::thread::JoinHandleExt as _;
    while !handles.iter().all(std::thread::JoinHandle::is_finished) {
        if due() {
            for h in handles.iter().filter(|h| !h.is_finished()) {
                crate::script::interrupt::interrupt(h.as_pthread_t());
            }
        }
        std::thread::sleep(LUA_WATCH);
    }
    join(handles)
}

fn join(
    handles: Vec<std::thread::JoinHandle<std::io::Result<Finished>>>,
) -> Result<Vec<Finished>, RunError> {
    let mut out = Vec::with_capacity(handles.len());
    let mut err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(f)) => out.push(f),
            Ok(Err(e)) => err = Some(RunError::Threads(e)),
            Err(_) => {
                err = Some(RunError::Threads(std::io::Error::other(
                    "a load thread panicked",
                )))
            }
        }
    }
    match err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// What became of the connections when none opened, unless there was only one reason (the
/// first error then says it all).
fn unopened(plan: &Plan, n: &NotOpened) -> String {
    let parts: Vec<String> = [
        (n.timed_out, "timed out connecting".to_string()),
        (n.failed, "failed".to_string()),
        (
            n.cut_off,
            format!(
                "still connecting when --setup-timeout {:?} ended",
                plan.setup_timeout
            ),
        ),
        (n.not_tried, "not tried in time".to_string()),
    ]
    .into_iter()
    .filter(|(k, _)| *k > 0)
    .map(|(k, what)| format!("{k} {what}"))
    .collect();
    match parts.len() {
        0 | 1 if n.cut_off + n.not_tried == 0 => String::new(),
        _ => format!(
            "; none of {} connections opened: {}",
            plan.connections,
            parts.join(", ")
        ),
    }
}
