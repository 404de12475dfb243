//! The job's `--slo`: which targets it is judged on (`spate merge --slo`, or the one set its
//! shards recorded), and the verdicts on the merged figures. Judging only; the figures are
//! `merge`'s.

use crate::analysis::{Measured, SloSpec, Verdict, verdicts};
use crate::stats::{Latency, Requests, Summary};

/// The targets to judge the job on, and a warning for a shard that recorded none; `Err`: the
/// shards' targets cannot be the job's (not one set, or not targets), which `--force` lets by.
pub(super) fn targets(
    kept: &[&(String, Summary)],
    given: Option<&SloSpec>,
) -> Result<(Option<SloSpec>, Option<String>), String> {
    let recorded: std::collections::BTreeSet<&str> = kept
        .iter()
        .filter_map(|r| r.1.config.shard.as_ref()?.slo.as_deref())
        .collect();
    let spec = match (given, recorded.len()) {
        (Some(s), _) => return Ok((Some(s.clone()), None)),
        (None, 0) => return Ok((None, None)),
        (None, 1) => {
            let text = recorded.first().copied().unwrap_or_default();
            text.parse::<SloSpec>()
                .map_err(|e| format!("the shards recorded --slo {text:?}, which is not one: {e}"))?
        }
        (None, _) => {
            let all: Vec<&str> = recorded.iter().copied().collect();
            return Err(format!(
                "the shards recorded different --slo ({}): give spate merge --slo to judge the job",
                all.join("; ")
            ));
        }
    };
    let silent = kept
        .iter()
        .find(|r| r.1.config.shard.as_ref().is_some_and(|sh| sh.slo.is_none()))
        .map(|(name, _)| {
            format!("{name} recorded no --slo: the job is judged on its other shards' targets")
        });
    Ok((Some(spec), silent))
}

/// The verdicts of `spec` on the job: its merged latency, its error rate (failed or status 400
/// or more, over attempted), its rate over the job's window. None without targets.
pub(super) fn judged(
    spec: Option<&SloSpec>,
    latency: &Latency,
    requests: &Requests,
    rps: f64,
) -> Vec<Verdict> {
    spec.map_or_else(Vec::new, |spec| {
        verdicts(
            spec,
            &Measured {
                percentiles: &latency.percentiles,
                error_rate: (requests.attempted > 0).then(|| {
                    (requests.failed + requests.error_status) as f64 / requests.attempted as f64
                }),
                rps,
            },
        )
    })
}
