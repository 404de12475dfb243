//! `Generator`: what spate itself did during a run (CPU, busy connections by Little's law, its
//! own stalls), the basis of the insight's verdict on whether spate limited the result. Facts
//! only; the judging is in `analysis::insight`.

use serde::{Deserialize, Serialize};

use super::RunOutput;
use std::time::Duration;

use crate::plan::{Plan, StageKind, Stop};

/// What spate itself did: the basis of the verdict on whether it limited the result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Generator {
    pub threads: u32,
    /// CPU time of the load threads during the run.
    pub cpu_s: Option<f64>,
    /// That CPU time over elapsed x threads, in %.
    pub cpu_busy_percent: Option<f64>,
    /// Mean latency x rate / open connections (Little's law); set for duration runs without
    /// failures, with enough samples and every connection answered, where it must be close to 1.
    pub busy_connections_ratio: Option<f64>,
    /// The streams per connection that ratio counts as busy slots: -p, or the server's limit
    /// if lower (1 for HTTP/1.1); its words say streams where there are several.
    #[serde(default)]
    pub busy_streams: Option<u64>,
    pub nofile_limit: Option<u64>,
    /// Cores the process could run on (load threads and anything else on the machine).
    pub cores: Option<u32>,
    /// Connects that failed because the file-descriptor limit was reached.
    pub fd_exhausted: u64,
    /// Stopped early by Ctrl-C, SIGTERM or SIGHUP.
    pub stopped_by_signal: bool,
    /// --busy-poll: the load threads polled instead of sleeping (their CPU use is then no sign of
    /// saturation).
    pub busy_poll: bool,
    /// The longest time a load thread did not run during the measurement (stopped, starved of
    /// CPU, swapped out), in ms, and when it began (s into the measurement). Its timer wakes
    /// late by that much; about a millisecond is normal.
    pub longest_stall_ms: Option<f64>,
    pub longest_stall_at_s: Option<f64>,
    /// -s: time the script's Lua took around requests (`delay`, `request`, `response`), in µs
    /// per completed response, and as a share of the load threads' CPU time in %; `None`
    /// without Lua per request. Absent from results saved before scripts ran per request.
    #[serde(default)]
    pub script_us_per_request: Option<f64>,
    #[serde(default)]
    pub script_cpu_percent: Option<f64>,
    /// -s: the script's first error during the run, which stopped it there (the figures are
    /// those up to then); `None` without one.
    #[serde(default)]
    pub script_error: Option<String>,
    /// -s: a load thread's Lua still ran when the run was over (the drain's end, or Ctrl-C)
    /// and was interrupted.
    #[serde(default)]
    pub script_interrupted: bool,
    /// -s: the script stopped every load thread (`wrk.thread:stop()`) before the run's end: the
    /// run lasted `totals.elapsed_s`, not its `-z`.
    #[serde(default)]
    pub script_stopped: bool,
}

/// Busy connections by Little's law, only where it must hold: a duration run without failures,
/// at least a second long, with enough completed requests to average over and no client left
/// unanswered.
/// Little's law's ratio, and the streams per connection it divides by.
fn busy_connections(plan: &Plan, run: &RunOutput, mean_s: f64) -> Option<(f64, u64)> {
    let s = &run.stats;
    let elapsed = run.elapsed.as_secs_f64();
    // The open model leaves connections idle by design: Little's law says nothing about spate.
    let usable = !plan.is_open()
        && matches!(plan.stop, Stop::Duration(_))
        && s.failed() == 0
        && s.completed >= 1000
        && elapsed >= 1.0
        && s.conns.established > 0
        // A client the server never answered waits the whole run in no request's latency: the
        // law does not describe such a run (the fairness rule does).
        && !s.per_client.contains(&0);
    usable.then(|| {
        // HTTP/2 and HTTP/3 multiplex: every stream in use is a request in flight (HTTP/3's
        // stream limit is QUIC's, which spate's streams wait on rather than learn).
        let streams = if s.conns.h2 + s.conns.h3 > 0 {
            let limit = s.conns.server_streams.unwrap_or(u64::MAX);
            u64::from(plan.h2.streams).min(limit).max(1)
        } else {
            1
        };
        // A connection profile's connections come and go: the mean it kept open.
        let connections = match plan
            .stages
            .as_ref()
            .filter(|p| p.kind == StageKind::Connections)
        {
            Some(p) => p.mean_connections(Duration::ZERO, p.duration(), |l| {
                super::stage_rows::part(plan, l)
            }),
            None => s.conns.established as f64,
        };
        let ratio =
            mean_s * ((s.completed - s.drained) as f64 / elapsed) / (connections * streams as f64);
        (ratio, streams)
    })
}

pub(super) fn generator(plan: &Plan, run: &RunOutput, mean_s: Option<f64>) -> Generator {
    // The CPU time runs from the start signal to the thread's end: warm-up and drain included.
    let wall = run.wall.as_secs_f64();
    let cpu_s = run.cpu.map(|d| d.as_secs_f64());
    // A stall that ended before the measurement (during --warmup) is not the result's.
    let stall = run.stats.stall.filter(|&(at, d)| at + d > run.window_start);
    let busy = mean_s.and_then(|m| busy_connections(plan, run, m));
    Generator {
        threads: run.threads,
        cpu_s,
        cpu_busy_percent: cpu_s
            .filter(|_| wall > 0.0)
            .map(|c| 100.0 * c / (wall * f64::from(run.threads.max(1)))),
        busy_connections_ratio: busy.map(|b| b.0),
        busy_streams: busy.map(|b| b.1),
        nofile_limit: run.nofile_limit,
        cores: run.cores,
        fd_exhausted: run.stats.fd_exhausted,
        stopped_by_signal: run.interrupted,
        busy_poll: plan.busy_poll,
        longest_stall_ms: stall.map(|(_, d)| d.as_secs_f64() * 1e3),
        longest_stall_at_s: stall
            .map(|(at, _)| at.saturating_duration_since(run.window_start).as_secs_f64()),
        script_us_per_request: (run.stats.lua_calls > 0 && run.stats.completed > 0)
            .then(|| run.stats.lua_ns as f64 / 1e3 / run.stats.completed as f64),
        script_cpu_percent: cpu_s
            .filter(|&c| c > 0.0 && run.stats.lua_calls > 0)
            .map(|c| 100.0 * run.stats.lua_ns as f64 / 1e9 / c),
        script_error: run.script_error.clone(),
        script_interrupted: run.script_interrupted,
        script_stopped: run.script_stopped,
    }
}
