//! `Armed::go`: the clock started on a prepared run (after --start-at's wait), each thread told
//! its part (`start::orders`), the threads joined (a script's Lua interrupted if it outlives the
//! drain), and their numbers merged into the run's `RunOutput`. Prints nothing.

use std::time::{Duration, Instant};

use super::armed::Armed;
use super::limits;
use super::thread::Go;
use crate::engine::slots::shared::Limit;
use crate::engine::{MAX_DRAIN, RunError, join, join_watched};
use crate::plan::Stop;
use crate::script::ThreadEnd;
use crate::stats::RunOutput;

/// How long after the drain's end a script's Lua may still run before it is interrupted: a
/// thread ends its loop at the drain's end, a few milliseconds after at most.
const LUA_GRACE: Duration = Duration::from_millis(100);

impl Armed<'_> {
    /// Starts the clock and runs to the end of the plan (or until stopped), then merges what
    /// the threads measured.
    pub fn go(mut self) -> Result<RunOutput, RunError> {
        let (plan, control, threads) = (self.plan, self.control, self.threads);
        let established = std::mem::take(&mut self.established);
        let (dns, setup_time) = (self.dns, self.setup_time);
        if let Some(at) = plan.start_at {
            crate::engine::run::start::wait(at, control)?;
        }
        let start = Instant::now();
        let now = std::time::SystemTime::now();
        let start_unix_ms = crate::stats::unix_ms(now + plan.warmup);
        let started_unix_us = crate::stats::unix_us(now);
        control.mark_started(start);
        let window_start = start + plan.warmup;
        let drain_end = match plan.stop {
            Stop::Duration(d) => Some(window_start + d + plan.timeout.min(MAX_DRAIN)),
            Stop::Requests(_) => None,
        };
        let window_end = match plan.stop {
            Stop::Duration(d) => Some(window_start + d),
            Stop::Requests(_) => None,
        };
        let base = Go {
            limit: Limit::Closed,
            window_start,
            drain_end,
            window_end,
            warmup_end: (!plan.warmup.is_zero()).then_some(window_start),
            paced: None,
        };
        let orders = crate::engine::run::start::orders(
            plan,
            &established,
            start,
            base,
            control.stop_requested(),
        );
        for (tx, go) in self.go_txs.iter().zip(orders) {
            // A thread that already died shows up when joined.
            let _ = tx.send(go);
        }
        self.go_txs.clear();

        let handles = std::mem::take(&mut self.handles);
        let finished = match plan.script.as_ref().is_some_and(|s| s.defines.per_thread()) {
            // Lua that still runs when the drain is over, or after Ctrl-C, is interrupted.
            true => join_watched(handles, || {
                control.stop_requested()
                    || self.script_halt.load(std::sync::atomic::Ordering::Relaxed)
                    || drain_end.is_some_and(|end| Instant::now() >= end + LUA_GRACE)
            })?,
            false => join(handles)?,
        };
        // The script's first error: the run stopped there, and what it measured is reported.
        let script_error = finished.iter().find_map(|f| f.script_error.clone());
        let script_interrupted = finished.iter().any(|f| f.script_interrupted);
        let script_ends: Vec<ThreadEnd> = match plan.script {
            Some(_) => finished
                .iter()
                .map(|f| f.script_end.clone().unwrap_or_default())
                .collect(),
            None => Vec::new(),
        };
        self.control.keep_script_ends(script_ends);
        let end = finished.iter().fold(window_start, |e, f| e.max(f.end));
        // A stop by a thread's script failing is not one from outside.
        let by_script = self.script_halt.load(std::sync::atomic::Ordering::Relaxed);
        let interrupted =
            control.stop_requested() || (!by_script && finished.iter().any(|f| f.interrupted));
        // A duration run lasts its -z, even when its schedule ran out earlier; a stopped run lasts
        // until the stop (the latest any thread noticed it).
        // A run whose every thread its script stopped ended when the last one did.
        let halted = finished.iter().all(|f| f.halted);
        let measured_end = match (interrupted, window_end) {
            (false, Some(_)) if halted => end.min(window_end.unwrap_or(end)),
            (false, Some(deadline)) => deadline,
            _ => finished
                .iter()
                .filter_map(|f| f.window_end)
                .max()
                .unwrap_or(end),
        };
        let cpu = finished
            .iter()
            .try_fold(Duration::ZERO, |a, f| f.cpu.map(|b| a + b));
        // The first thread's stats become the total: a fresh one would allocate eight more 270 KiB
        // histograms, and the allocator zeroes part of each, which makes them resident.
        let mut each = finished.into_iter().map(|f| f.stats);
        let mut stats = each.next().unwrap_or_default();
        for s in each {
            stats += &s;
        }
        Ok(RunOutput {
            stats,
            elapsed: measured_end.saturating_duration_since(window_start),
            drain: end.saturating_duration_since(measured_end),
            wall: end.saturating_duration_since(start),
            dns,
            setup: setup_time,
            alt_svc: self.alt_svc.take(),
            threads: threads as u32,
            window_start,
            start_unix_ms,
            started_unix_us,
            cpu,
            interrupted,
            script_stopped: halted
                && plan.script.is_some()
                && script_error.is_none()
                && !script_interrupted
                && !interrupted
                && window_end.is_none_or(|w| end < w),
            script_error,
            script_interrupted,
            nofile_limit: limits::nofile().soft,
            cores: std::thread::available_parallelism()
                .ok()
                .map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX)),
        })
    }
}
