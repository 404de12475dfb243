//! `OpenModel`: the open model's schedule (`-q`) as the report shows it: target and achieved
//! rate, scheduled = sent + dropped + missed, send lag and service time. Absent in the closed
//! model.

use serde::{Deserialize, Serialize};

use super::{Phase, RunOutput};
use crate::plan::Plan;

/// The open model (`-q`): the schedule, and how well spate kept it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpenModel {
    pub rate_target: f64,
    /// Requests sent per second of the sending window: from the start of the measurement to the
    /// last send plus one interval, or the schedule's own length (scheduled / rate) if longer.
    pub rate_achieved: f64,
    /// Intended send times in the measured part: sent + dropped + missed.
    pub scheduled: u64,
    pub sent: u64,
    /// Later than --max-lag when a connection came free: not sent, counted.
    pub dropped: u64,
    /// Still waiting for a connection when the run ended.
    pub missed: u64,
    pub max_lag_ms: Option<f64>,
    /// Completion - actual send.
    pub service: Phase,
    /// Actual send - intended send.
    pub send_lag: Phase,
}

pub(super) fn open_model(plan: &Plan, run: &RunOutput) -> Option<OpenModel> {
    let target = plan.own_rate()?;
    let s = &run.stats;
    // The sending window runs to the last send plus one interval, and is never shorter than
    // the schedule itself: requests that were never sent (missed) lower the rate.
    let sending = s.last_send.map_or(0.0, |t| {
        t.saturating_duration_since(run.window_start).as_secs_f64()
    }) + 1.0 / target;
    let window = sending.max(s.scheduled as f64 / target);
    let rate_achieved = if s.attempts > 0 {
        s.attempts as f64 / window
    } else {
        0.0
    };
    Some(OpenModel {
        rate_target: target,
        rate_achieved,
        scheduled: s.scheduled,
        sent: s.attempts,
        dropped: s.dropped,
        missed: s.scheduled.saturating_sub(s.attempts + s.dropped),
        max_lag_ms: plan.max_lag.map(|d| d.as_secs_f64() * 1e3),
        service: Phase::of(&s.service),
        send_lag: Phase::of(&s.lag),
    })
}
