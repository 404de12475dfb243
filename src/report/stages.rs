//! `--stages` in words: the text report's row per stage and the breaking point's sentence
//! (the insight's, for the text, the HTML and the JSON alike). Judges nothing: the rows are
//! `stats`', the breaking point `analysis`'.

use std::fmt::Write as _;

use crate::analysis::BreakingPoint;
use crate::numbers::{count, millis, per_second as rate};
use crate::stats::Summary;

/// `--stages`: a row per stage, from the seconds that start in it.
pub(super) fn table(o: &mut String, s: &Summary) -> std::fmt::Result {
    if s.stages.is_empty() {
        return Ok(());
    }
    writeln!(o, "\nStages (each from the seconds that start in it)")?;
    writeln!(
        o,
        "  {:>5}  {:>15}  {:>21}  {:>9}  {:>9}  {:>10}  {:>10}  {:>10}  {:>6}",
        "stage",
        "time",
        "target requests/s",
        "scheduled",
        "completed",
        "achieved/s",
        "p50",
        "p99",
        "errors"
    )?;
    for r in &s.stages {
        let secs = |x: f64| match (x - x.round()).abs() < 1e-9 {
            true => format!("{x:.0}"),
            false => format!("{x:.1}"),
        };
        let time = format!("{}-{} s", secs(r.start_s), secs(r.start_s + r.duration_s));
        let target = format!("{} -> {}", rate(r.target_from), rate(r.target_to));
        let (p50, p99) = match &r.latency_ms {
            Some(q) => (millis(q.p50), millis(q.p99)),
            None => ("-".into(), "-".into()),
        };
        writeln!(
            o,
            "  {:>5}  {time:>15}  {target:>21}  {:>9}  {:>9}  {:>10}  {p50:>10}  {p99:>10}  {:>6}",
            r.stage,
            count(r.scheduled),
            count(r.completed),
            rate(r.achieved_rate),
            count(r.failed + r.error_status),
        )?;
    }
    Ok(())
}

/// The breaking point as the insight says it.
pub(super) fn breaking_point(b: &BreakingPoint) -> String {
    use crate::analysis::Evidence as E;
    let why = match &b.evidence {
        E::P99 { p99_ms, target_ms } => format!(
            "its p99 was {} against the --slo target of {}",
            millis(*p99_ms),
            millis(*target_ms)
        ),
        E::Rate {
            completed,
            scheduled,
        } => format!(
            "{} of its {} scheduled requests completed in it (under {:.0} %)",
            count(*completed),
            count(*scheduled),
            crate::analysis::HELD_SHARE * 100.0
        ),
        E::Errors {
            failed,
            error_status,
        } => format!(
            "{} requests failed and {} responses had a status of 400 or more in it",
            count(*failed),
            count(*error_status)
        ),
    };
    let held = match b.last_held_rate {
        Some(r) => format!("the last load that held was {} requests/s", rate(r)),
        None => "no second before it held".into(),
    };
    format!(
        "Breaking point: the service stopped keeping up at {} requests/s, in the second from {:.0} s: {why}; {held}.",
        rate(b.target_rate),
        b.t_s
    )
}
