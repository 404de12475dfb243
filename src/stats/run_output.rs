//! `RunOutput`: what a finished run measured, the merged `Stats` with the clocks and facts
//! around them (the window, the drain, DNS, setup, CPU, limits). Facts only: the report reads it.

use std::time::{Duration, Instant};

use super::{Stats, unix_ms};

/// What a finished run measured: the merged stats and the clocks around them.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub stats: Stats,
    /// The measured window: from its start (after --warmup) to -z's deadline or the stop
    /// request, or, in a count run, to the end of the last connection.
    pub elapsed: Duration,
    /// After the window, the wait for requests still in flight.
    pub drain: Duration,
    /// From the start signal to the end of the last connection: warm-up, window and drain.
    pub wall: Duration,
    /// Time to resolve the host, once, before any connection.
    pub dns: Duration,
    /// `--alt-svc`: the server's h3 alternative the run followed (`h3=":443"`).
    pub alt_svc: Option<String>,
    /// Time the connections took to open before the clock started (at most --setup-timeout).
    pub setup: Duration,
    /// Threads that ran.
    pub threads: u32,
    /// When the measured part of the run began (the start signal, plus --warmup).
    pub window_start: Instant,
    /// The same instant on the wall clock, in ms since the Unix epoch.
    pub start_unix_ms: u64,
    /// The start signal (before any --warmup) on the wall clock, µs since the Unix epoch.
    pub started_unix_us: u64,
    /// CPU time of the load threads during the run, summed; `None` where unknown.
    pub cpu: Option<Duration>,
    /// The run was stopped early from outside (Ctrl-C, SIGTERM).
    pub interrupted: bool,
    /// -s: the script's first error during the run, which stopped it there.
    pub script_error: Option<String>,
    /// -s: a load thread's Lua still ran when the run was over (its drain, or Ctrl-C), and was
    /// interrupted.
    pub script_interrupted: bool,
    /// The script stopped every load thread (`wrk.thread:stop()`), without an error.
    pub script_stopped: bool,
    /// The soft limit on open file descriptors, where there is one.
    pub nofile_limit: Option<u64>,
    /// Cores the process may run on, where known.
    pub cores: Option<u32>,
}

impl RunOutput {
    /// A run that measured nothing (it did not start).
    pub fn empty(threads: u32) -> RunOutput {
        RunOutput {
            stats: Stats::default(),
            elapsed: Duration::ZERO,
            drain: Duration::ZERO,
            wall: Duration::ZERO,
            dns: Duration::ZERO,
            alt_svc: None,
            setup: Duration::ZERO,
            threads,
            window_start: Instant::now(),
            start_unix_ms: unix_ms(std::time::SystemTime::now()),
            started_unix_us: super::unix_us(std::time::SystemTime::now()),
            cpu: None,
            interrupted: false,
            script_error: None,
            script_interrupted: false,
            script_stopped: false,
            nofile_limit: None,
            cores: None,
        }
    }
}
