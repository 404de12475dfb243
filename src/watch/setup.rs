//! How a run's watchers are set up from its flags: --live-json's file (or stdout) opened,
//! --metrics-listen's address bound, and the labels of the run's series (its `run_id`, shard,
//! gRPC call, and the names of a request list's rows). Runs before the run; prints nothing.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use super::exposition::Labels;
use super::{Watchers, Watching};
use crate::plan::Plan;
use crate::stats::Board;

/// What watches `plan`'s run through `board`: `live_json`'s lines (to stdout for `-`, else to
/// the file, created or emptied) and an endpoint on `metrics` (bound now: a port that is taken
/// is one line before anything is sent).
pub fn start(
    board: Arc<Board>,
    plan: &Plan,
    live_json: Option<&Path>,
    metrics: Option<SocketAddr>,
) -> Result<Watching, String> {
    let lines = match live_json {
        Some(path) => {
            let name = format!("--live-json {}", path.display());
            let out: Box<dyn std::io::Write + Send> = match path.to_str() {
                Some("-") => Box::new(std::io::stdout()),
                _ => Box::new(std::fs::File::create(path).map_err(|e| format!("{name}: {e}"))?),
            };
            Some((out, name))
        }
        None => None,
    };
    let metrics = match metrics {
        Some(addr) => {
            let listener = std::net::TcpListener::bind(addr)
                .map_err(|e| format!("--metrics-listen {addr}: cannot listen there: {e}"))?;
            let mut labels = Labels::new(&run_id(plan), plan.shard.map(|s| (s.index, s.count)))
                .with_rows(request_names(plan));
            if let Some(g) = &plan.grpc {
                labels = labels.with_call(&g.call);
            }
            Some((listener, labels))
        }
        None => None,
    };
    Watching::start(board, plan.clone(), Watchers { lines, metrics })
}

/// The names of a request list's rows for the metrics' `request` label: each URL (credentials
/// masked), each MCP tool, or each gRPC message's place (`#2`: a message is a body, which the
/// endpoint never shows).
fn request_names(plan: &Plan) -> Vec<String> {
    let Some(list) = &plan.list else {
        return Vec::new();
    };
    if let Some(m) = &list.mcp {
        return m.labels.clone();
    }
    let names = crate::stats::url_row::names(plan, list);
    match plan.grpc {
        Some(_) => names
            .into_iter()
            .map(|n| match n.split_once(' ') {
                Some((place, _)) if place.starts_with('#') => place.to_owned(),
                _ => n,
            })
            .collect(),
        None => names,
    }
}

/// The run's `run_id` label: when the job starts (`--start-at`, the same for every shard of
/// it), else when this run was started, in ms since the Unix epoch.
fn run_id(plan: &Plan) -> String {
    let at = plan
        .start_at
        .map_or_else(std::time::SystemTime::now, |s| s.at);
    at.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
        .to_string()
}
