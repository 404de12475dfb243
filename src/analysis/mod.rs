//! Judgements derived from a run's numbers: the SLO colour levels, the `--slo` verdicts, the
//! insight findings, and the test that tells two targets' rounds apart. Pure functions of plain
//! data: no IO, no terminal, no clock, and no sentences (the report words the findings).

mod baseline;
mod breaking;
mod fairness;
mod finding;
#[cfg(test)]
pub(crate) mod fixture;
mod generator;
mod insight;
mod knee;
mod levels;
mod mann_whitney;
mod measure;
mod ports;
mod slo;
mod versus;

pub use baseline::{Comparison, Delta, Difference, Gates, Sample, compare};
pub use breaking::{BreakingPoint, Evidence, HELD_SHARE, breaking_point};
pub use fairness::starved;
pub use finding::{ClassCount, CodeCount, Finding, Limit, Spread, TailPhase};
pub use insight::{Facts, HIGH_ERROR_RATE, SEND_LAG_MS, STALL_MS, insight};
pub use knee::{
    Excluded, Figures, KNEE_MAX_ERRORS_PCT, KNEE_SHARE, Knee, Level, Overhead, Past, Sweep,
    TAIL_MIN_MS, TAIL_RATIO, Tail, knee, sweep,
};
pub use levels::{LEVEL_RATIOS, LEVEL_WORDS, Levels, Standing, Target};
pub use mann_whitney::{MAX_SAMPLE, Shift, UTest, mann_whitney, shift, smallest_p};
pub use measure::Measure;
pub use slo::{
    Measured, Pct, SloSpec, StageVerdicts, Verdict, latency_targets, stage_verdicts, verdicts,
};
pub use versus::{Change, Outcome, Row, Target as Contender, Versus, versus};

use crate::stats::Summary;

/// Everything judged of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// The levels that colour the report; `None` without data or targets.
    pub levels: Option<Levels>,
    /// One verdict per `--slo` target, in the order of the report.
    pub thresholds: Vec<Verdict>,
    pub findings: Vec<Finding>,
}

/// Levels, verdicts and findings, from the numbers of a run.
pub fn analyse(s: &Summary, slo: &SloSpec) -> Analysis {
    let p = &s.latency.percentiles;
    let bad_status: u64 = s
        .status_codes
        .iter()
        .filter(|s| s.code >= 400)
        .map(|s| s.count)
        .sum();
    let r = &s.requests;
    let error_rate = (r.attempted > 0).then(|| (r.failed + bad_status) as f64 / r.attempted as f64);
    let thresholds = verdicts(
        slo,
        &Measured {
            percentiles: p,
            error_rate,
            rps: s.totals.requests_per_sec,
        },
    );
    Analysis {
        levels: Levels::new(p, &slo.latency_ms()),
        thresholds,
        findings: findings(s),
    }
}

/// `--stages`: the breaking point of `s`, against the p99 target `p99_ms` if the run has one.
pub fn breaking(s: &Summary, p99_ms: Option<f64>) -> Option<BreakingPoint> {
    s.config.stages.as_ref()?;
    breaking_point(&s.timeline, p99_ms)
}

/// The p99 target among latency `targets`, if there is one.
pub fn p99_target(targets: &[(Pct, f64)]) -> Option<f64> {
    targets
        .iter()
        .find(|(p, _)| *p == Pct::P99)
        .map(|&(_, ms)| ms)
}

/// The insight rules' findings; a run that did not start has only that one.
pub fn findings(s: &Summary) -> Vec<Finding> {
    if let Some(e) = &s.error {
        return vec![Finding::DidNotStart {
            message: e.message.clone(),
        }];
    }
    insight(&Facts {
        requests: &s.requests,
        percentiles: &s.latency.percentiles,
        latency_count: s.latency.count,
        status_codes: &s.status_codes,
        errors: &s.errors,
        phases: &s.phases,
        connections: &s.connections,
        generator: &s.generator,
        elapsed_s: s.totals.elapsed_s,
        open: s.open_model.as_ref(),
        longest_gap: s.totals.longest_gap_ms.zip(s.totals.longest_gap_at_s),
        redirect_limit: s.config.redirects,
        streaming: s.streaming.as_ref(),
        tools: s.mcp.as_ref().map_or(0, |m| m.tools.len() as u64),
    })
}
