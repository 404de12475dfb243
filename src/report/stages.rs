//! `--stages` in words: the text report's row per stage and the breaking point's sentence
//! (the insight's, for the text, the HTML and the JSON alike). Judges nothing: the rows are
//! `stats`', the breaking point `analysis`'.

use std::fmt::Write as _;

use crate::analysis::BreakingPoint;
use crate::analysis::StageVerdicts;
use crate::numbers::{count, millis, per_second as rate};
use crate::report::Report;
use crate::stats::StageRow;

/// `--stages`: a row per stage, from the seconds that start in it, with its `--slo` verdict
/// when the run has targets.
pub(super) fn table(o: &mut String, s: &Report) -> std::fmt::Result {
    rows(
        o,
        &s.stages,
        s.config.model == "closed",
        &s.stage_thresholds,
    )
}

/// The rows of a profile (`connections`: its targets are connections), each with its verdicts
/// among `judged` when there are any.
pub(super) fn rows(
    o: &mut String,
    stages: &[StageRow],
    connections: bool,
    judged: &[StageVerdicts],
) -> std::fmt::Result {
    if stages.is_empty() {
        return Ok(());
    }
    writeln!(o, "\nStages (each from the seconds that start in it)")?;
    writeln!(
        o,
        "  {:>5}  {:>15}  {:>21}  {:>9}  {:>9}  {:>10}  {:>10}  {:>10}  {:>6}",
        "stage",
        "time",
        match connections {
            true => "target connections",
            false => "target requests/s",
        },
        match connections {
            true => "sent",
            false => "scheduled",
        },
        "completed",
        "achieved/s",
        "p50",
        "p99",
        "errors"
    )?;
    if !judged.is_empty() {
        o.pop();
        writeln!(o, "  slo")?;
    }
    for r in stages {
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
            count(r.scheduled.unwrap_or(r.sent)),
            count(r.completed),
            rate(r.achieved_rate),
            count(r.failed + r.error_status),
        )?;
        if let Some(v) = judged.iter().find(|v| v.stage == r.stage) {
            o.pop();
            let failed: Vec<&str> = v
                .thresholds
                .iter()
                .filter(|t| !t.pass)
                .map(|t| t.name.as_str())
                .collect();
            match failed.is_empty() {
                true => writeln!(o, "  pass")?,
                false => writeln!(o, "  FAIL {}", failed.join(", "))?,
            }
        }
    }
    if !judged.is_empty() {
        writeln!(
            o,
            "  Each stage is judged on the --slo targets from its own seconds; the run's\n  verdicts and exit code are the whole run's."
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
        E::Throughput {
            completed,
            expected,
        } => format!(
            "{} responses completed in it, under {:.0} % of the {} its connections made at the best rate per connection before it",
            count(*completed),
            crate::analysis::HELD_SHARE * 100.0,
            count(*expected)
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
    let load = |r: f64| match b.target_connections {
        Some(_) => format!("{} connections", rate(r)),
        None => format!("{} requests/s", rate(r)),
    };
    let held = match b.last_held_rate.or(b.last_held_connections) {
        Some(r) => format!("the last load that held was {}", load(r)),
        None => "no second before it held".into(),
    };
    let at = b.target_rate.or(b.target_connections).unwrap_or(0.0);
    format!(
        "Breaking point: the service stopped keeping up at {}, in the second from {:.0} s: {why}; {held}.",
        load(at),
        b.t_s
    )
}
