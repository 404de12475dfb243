//! `--stages`: each stage's results, from the timeline's seconds that start in it (a stage
//! shorter than a second, or a jump, has none of its own). Numbers only; the breaking point is
//! `analysis`'s.

use serde::{Deserialize, Serialize};

use super::summary::{Latency, Percentiles};
use super::timeline::{Entry, Quantiles, Second};
use std::time::Duration;

use crate::plan::{Plan, StageKind};

/// One stage of the run's profile and what its seconds did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StageRow {
    /// Its place in the profile, from 1 (jumps included).
    pub stage: u32,
    /// Where it starts, seconds into the measured window, and how long it lasts.
    pub start_s: f64,
    pub duration_s: f64,
    /// The target at its start and at its end, in the profile's unit: requests per second, or
    /// connections (this run's part of the job's, under --shard).
    pub target_from: f64,
    pub target_to: f64,
    /// Over its seconds: requests due (a rate profile; null for connections), sent, completed
    /// (with the error statuses among them) and failed, and the rate the completions make over
    /// its length.
    pub scheduled: Option<u64>,
    pub sent: u64,
    pub completed: u64,
    pub error_status: u64,
    pub failed: u64,
    pub achieved_rate: f64,
    /// A rate profile: the requests dropped for --max-lag in its seconds, and the p99 of the
    /// send lag of those sent in them (null when none was sent); null for connections.
    #[serde(default)]
    pub dropped: Option<u64>,
    #[serde(default)]
    pub lag_p99_ms: Option<f64>,
    /// Of the responses completed in its seconds; null when none completed.
    pub latency_ms: Option<Quantiles>,
    /// Their percentiles (what `--slo` judges each stage on), and their HdrHistogram (what
    /// `spate merge` adds up), as the run's `latency` has them.
    #[serde(default)]
    pub percentiles_ms: Percentiles,
    #[serde(default)]
    pub hdr_base64: String,
}

/// `timeline` with each second's target connections under a connection profile: the whole
/// connections it kept open on average over the second (this run's part of the job's, under
/// --shard).
pub fn with_targets(plan: &Plan, mut timeline: Vec<Entry>) -> Vec<Entry> {
    let Some(stages) = plan
        .stages
        .as_ref()
        .filter(|s| s.kind == StageKind::Connections)
    else {
        return timeline;
    };
    let secs = |s: f64| Duration::from_secs_f64(s.max(0.0));
    for e in &mut timeline {
        let mean = stages.mean_connections(secs(e.t_s), secs(e.t_s + e.span_s), |l| part(plan, l));
        e.target_connections = Some(mean);
    }
    timeline
}

/// This run's part of the job's `level` connections: a shard's stripe.
pub fn part(plan: &Plan, level: u64) -> u64 {
    plan.shard.map_or(level, |s| {
        crate::plan::stages::striped(level, u64::from(s.index), u64::from(s.count))
    })
}

/// The rows of `plan`'s profile, from the run's `seconds`; none without one.
pub fn stage_rows(plan: &Plan, seconds: &[Second]) -> Vec<StageRow> {
    let Some(stages) = plan.stages.as_ref() else {
        return Vec::new();
    };
    let rates = stages.kind == StageKind::Rate;
    let share = 1.0 / f64::from(plan.shard.map_or(1, |s| s.count));
    let (mut start, mut level) = (0.0f64, 0.0);
    let mut rows = Vec::new();
    for (i, s) in stages.stages.iter().enumerate() {
        let to = s.value(stages.kind) * share;
        let len = s.duration.as_secs_f64();
        if len > 0.0 {
            let end = start + len;
            let inside: Vec<&Second> = seconds
                .iter()
                .filter(|x| {
                    let t = x.start_ns as f64 / 1e9;
                    t >= start - 1e-9 && t < end - 1e-9
                })
                .collect();
            let latency: super::Sparse = inside
                .iter()
                .flat_map(|x| x.latency.iter().copied())
                .collect();
            let whole = Latency::of(&super::Hist::of_sparse(&latency), 0);
            let lag: super::Sparse = inside.iter().flat_map(|x| x.lag.iter().copied()).collect();
            let lag_p99_ms = (rates && !lag.is_empty())
                .then(|| super::Hist::of_sparse(&lag).value_at_quantile(0.99) as f64 / 1e6);
            let completed: u64 = inside.iter().map(|x| x.completed).sum();
            rows.push(StageRow {
                stage: i as u32 + 1,
                start_s: start,
                duration_s: len,
                target_from: level,
                target_to: to,
                scheduled: rates.then(|| inside.iter().map(|x| x.scheduled).sum()),
                sent: inside.iter().map(|x| x.sent).sum(),
                completed,
                error_status: inside.iter().map(|x| x.error_status).sum(),
                failed: inside.iter().map(|x| x.failures.iter().sum::<u64>()).sum(),
                achieved_rate: completed as f64 / len,
                dropped: rates.then(|| inside.iter().map(|x| x.dropped).sum()),
                lag_p99_ms,
                latency_ms: (!latency.is_empty()).then(|| Quantiles::of_sparse(&latency)),
                percentiles_ms: whole.percentiles,
                hdr_base64: whole.hdr_base64,
            });
            start = end;
        }
        level = to;
    }
    rows
}
