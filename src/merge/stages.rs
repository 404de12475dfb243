//! `spate merge` under `--stages`: the job's row per stage, from its shards' rows of the same
//! stage (each shard followed its part of the job's profile over its own window): counts and
//! targets summed, latency histograms added exactly. Rows the shards do not share are left out
//! with a warning. Reads no files and prints nothing.

use hdrhistogram::Histogram;

use crate::stats::timeline::Quantiles;
use crate::stats::{
    HIST_HIGH_NS, HIST_LOW_NS, HIST_SIGFIG, Latency, StageRow, Summary, from_base64_v2,
};

/// The job's stage rows, and a warning when the shards' rows cannot be added.
pub(super) fn rows(runs: &[&(String, Summary)]) -> (Vec<StageRow>, Option<String>) {
    let Some((_, first)) = runs.first().map(|r| (&r.0, &r.1)) else {
        return (Vec::new(), None);
    };
    if first.stages.is_empty() {
        return (Vec::new(), None);
    }
    let same = |a: &StageRow, b: &StageRow| {
        a.stage == b.stage
            && (a.start_s - b.start_s).abs() < 1e-6
            && (a.duration_s - b.duration_s).abs() < 1e-6
    };
    for (name, s) in &runs[1..] {
        let matched = s.stages.len() == first.stages.len()
            && s.stages.iter().zip(&first.stages).all(|(a, b)| same(a, b));
        if !matched {
            return (
                Vec::new(),
                Some(format!(
                    "{name}: its stages differ from the first shard's: no row per stage for the job"
                )),
            );
        }
    }
    let mut warning = None;
    let rows = first
        .stages
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let of = || runs.iter().map(move |r| &r.1.stages[i]);
            let sum = |f: fn(&StageRow) -> u64| of().map(f).fold(0u64, u64::saturating_add);
            let completed = sum(|r| r.completed);
            let latency = match added(of()) {
                Ok(l) => l,
                Err(why) => {
                    warning.get_or_insert(why);
                    None
                }
            };
            StageRow {
                stage: row.stage,
                start_s: row.start_s,
                duration_s: row.duration_s,
                target_from: of().map(|r| r.target_from).sum(),
                target_to: of().map(|r| r.target_to).sum(),
                scheduled: of()
                    .map(|r| r.scheduled)
                    .try_fold(0u64, |a, n| Some(a.saturating_add(n?))),
                sent: sum(|r| r.sent),
                dropped: of()
                    .map(|r| r.dropped)
                    .try_fold(0u64, |a, n| Some(a.saturating_add(n?))),
                // A tail of the shards' send lags is not their sum: each shard's is in its file.
                lag_p99_ms: None,
                completed,
                error_status: sum(|r| r.error_status),
                failed: sum(|r| r.failed),
                achieved_rate: match row.duration_s > 0.0 {
                    true => completed as f64 / row.duration_s,
                    false => 0.0,
                },
                latency_ms: latency.as_ref().filter(|l| l.count > 0).map(|l| {
                    let p = &l.percentiles;
                    Quantiles {
                        p50: p.p50.unwrap_or(0.0),
                        p90: p.p90.unwrap_or(0.0),
                        p99: p.p99.unwrap_or(0.0),
                        max: l.max_ms.unwrap_or(0.0),
                    }
                }),
                percentiles_ms: latency
                    .as_ref()
                    .map(|l| l.percentiles.clone())
                    .unwrap_or_default(),
                hdr_base64: latency.map(|l| l.hdr_base64).unwrap_or_default(),
            }
        })
        .collect();
    (rows, warning)
}

/// The stage's histograms of the shards, added; `None` when a shard's row has responses but no
/// histogram (a result from before rows carried one), with why.
fn added<'a>(rows: impl Iterator<Item = &'a StageRow>) -> Result<Option<Latency>, String> {
    let mut sum = Histogram::<u64>::new_with_bounds(HIST_LOW_NS, HIST_HIGH_NS, HIST_SIGFIG)
        .expect("constant histogram bounds are valid");
    for r in rows {
        if r.completed == 0 && r.hdr_base64.is_empty() {
            continue;
        }
        let Some(h) = from_base64_v2(&r.hdr_base64) else {
            return Err(format!(
                "stage {}: a shard's row has no latency histogram that can be read: its latency is left out",
                r.stage
            ));
        };
        sum.add(&h).map_err(|e| {
            format!(
                "stage {}: a latency histogram cannot be added: {e:?}",
                r.stage
            )
        })?;
    }
    Ok(Some(Latency::of(&sum, 0)))
}
