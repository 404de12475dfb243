//! `spate compare`'s judgement of targets run in rounds: per target and metric the rounds'
//! median and range; against the reference target the shift (a ratio, or percentage points for
//! errors) with its interval, the exact U test's p, and a verdict that needs both a p within
//! alpha and a change beyond the noise. The unit is one round, never one request. Typed only.

use hdrhistogram::Histogram;
use serde::Serialize;

use super::mann_whitney::{mann_whitney, median_of_sorted, shift, smallest_p};
use super::{Finding, Measure};
use crate::stats::{HIST_HIGH_NS, HIST_LOW_NS, HIST_SIGFIG, Summary, from_base64_v2};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Better,
    Worse,
    /// No difference shown: p above alpha, or a change within the noise.
    Same,
}

/// A target against the reference on one measure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// target / reference (Hodges-Lehmann on logarithms); for errors and unanswered
    /// connections, target - reference in percentage points.
    pub estimate: f64,
    /// Its interval at 1 - alpha, if the rounds allow one.
    pub interval: Option<(f64, f64)>,
    pub p: f64,
    pub verdict: Outcome,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub measure: Measure,
    /// The measure's unit, for programs.
    pub unit: &'static str,
    /// One value per round that had one.
    pub values: Vec<f64>,
    pub median: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// Against the reference; `None` for the reference itself or without values.
    pub change: Option<Change>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Target {
    pub name: String,
    pub url: String,
    pub rounds: usize,
    pub rows: Vec<Row>,
    /// p50 .. p99.99 and max (ms) of all rounds' responses together.
    pub ladder: Vec<Rung>,
    /// Rounds (1-based) in which spate's own verdict was that it may have limited the result.
    pub limited_rounds: Vec<usize>,
}

/// A percentile of the merged latency.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rung {
    /// "p50" ... "p99.99", or "max".
    pub percentile: &'static str,
    pub ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Versus {
    pub targets: Vec<Target>,
    pub reference: usize,
    pub alpha: f64,
    /// Relative changes smaller than this (0.02: 2 %) are `Same` whatever p says.
    pub noise: f64,
    /// The smallest p the fewest rounds compared can give; above alpha no difference can show.
    pub smallest_p: f64,
    /// The fewest rounds a side at which a difference can show at alpha.
    pub rounds_needed: usize,
}

fn change(m: Measure, reference: &[f64], target: &[f64], alpha: f64, noise: f64) -> Option<Change> {
    let p = mann_whitney(reference, target)?.p;
    let ratio = !m.in_points();
    let (estimate, interval) = if ratio {
        if reference.iter().chain(target).any(|&v| v <= 0.0) {
            return None;
        }
        let ln = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<_>>();
        let s = shift(&ln(reference), &ln(target), alpha)?;
        (
            s.estimate.exp(),
            s.interval.map(|(a, b)| (a.exp(), b.exp())),
        )
    } else {
        let s = shift(reference, target, alpha)?;
        (s.estimate, s.interval)
    };
    let neutral = if ratio { 1.0 } else { 0.0 };
    let within_noise = ratio && (estimate - 1.0).abs() < noise;
    let shown = p <= alpha && !within_noise && estimate != neutral;
    let verdict = if !shown {
        Outcome::Same
    } else if (estimate > neutral) == m.higher_is_better() {
        Outcome::Better
    } else {
        Outcome::Worse
    };
    Some(Change {
        estimate,
        interval,
        p,
        verdict,
    })
}

fn ladder(rounds: &[Summary]) -> Vec<Rung> {
    let mut all = Histogram::<u64>::new_with_bounds(HIST_LOW_NS, HIST_HIGH_NS, HIST_SIGFIG).ok();
    for h in rounds
        .iter()
        .filter_map(|s| from_base64_v2(&s.latency.hdr_base64))
    {
        if let Some(a) = all.as_mut() {
            let _ = a.add(&h);
        }
    }
    let all = all.filter(|h| !h.is_empty());
    let at = |q: f64| all.as_ref().map(|h| h.value_at_quantile(q) as f64 / 1e6);
    let max = all.as_ref().map(|h| h.max() as f64 / 1e6);
    [
        ("p50", at(0.5)),
        ("p90", at(0.9)),
        ("p99", at(0.99)),
        ("p99.9", at(0.999)),
        ("p99.99", at(0.9999)),
        ("max", max),
    ]
    .map(|(percentile, ms)| Rung { percentile, ms })
    .to_vec()
}

/// The targets' rounds (name, URL, one summary per round), judged against `reference`.
pub fn versus(
    runs: &[(String, String, Vec<Summary>)],
    reference: usize,
    alpha: f64,
    noise: f64,
) -> Versus {
    let values = |rounds: &[Summary], m: Measure| -> Vec<f64> {
        rounds.iter().filter_map(|s| m.of(s)).collect()
    };
    let base = &runs[reference].2;
    let targets = runs
        .iter()
        .enumerate()
        .map(|(i, (name, url, rounds))| Target {
            name: name.clone(),
            url: url.clone(),
            rounds: rounds.len(),
            rows: Measure::ALL
                .iter()
                .map(|&m| {
                    let v = values(rounds, m);
                    let sorted = {
                        let mut s = v.clone();
                        s.sort_by(f64::total_cmp);
                        s
                    };
                    Row {
                        measure: m,
                        unit: m.unit(),
                        median: median_of_sorted(&sorted),
                        min: sorted.first().copied(),
                        max: sorted.last().copied(),
                        change: (i != reference)
                            .then(|| change(m, &values(base, m), &v, alpha, noise))
                            .flatten(),
                        values: v,
                    }
                })
                .collect(),
            ladder: ladder(rounds),
            limited_rounds: rounds
                .iter()
                .enumerate()
                .filter(|(_, s)| {
                    super::findings(s)
                        .iter()
                        .any(|f| matches!(f, Finding::SpateLimited { .. }))
                })
                .map(|(k, _)| k + 1)
                .collect(),
        })
        .collect();
    let fewest = runs.iter().map(|r| r.2.len()).min().unwrap_or(0);
    let rounds_needed = (2..=super::MAX_SAMPLE)
        .find(|&n| smallest_p(n, n) <= alpha)
        .unwrap_or(super::MAX_SAMPLE);
    Versus {
        targets,
        reference,
        alpha,
        noise,
        smallest_p: if fewest > 0 {
            smallest_p(fewest, fewest)
        } else {
            1.0
        },
        rounds_needed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Pct;

    fn round(rps: f64, p50: f64) -> Summary {
        let plan = crate::plan::Plan::new(crate::target::Target::parse("http://a/").unwrap());
        let mut s = Summary::new(
            &plan,
            &crate::stats::RunOutput::empty(1),
            crate::stats::HISTOGRAM_BINS,
        );
        s.totals.requests_per_sec = rps;
        s.latency.percentiles.p50 = Some(p50);
        s.requests.attempted = 100;
        s.requests.completed = 100;
        s.generator.cpu_s = Some(0.001);
        s
    }

    fn rounds(rps: &[f64], p50: f64) -> Vec<Summary> {
        rps.iter().map(|&r| round(r, p50)).collect()
    }

    fn row(v: &Versus, target: usize, m: Measure) -> &Row {
        v.targets[target]
            .rows
            .iter()
            .find(|r| r.measure == m)
            .unwrap()
    }

    #[test]
    fn half_the_rate_and_twice_the_latency_is_slower_on_both() {
        let runs = vec![
            (
                "a".into(),
                "http://a/".into(),
                rounds(&[1000.0, 1010.0, 990.0, 1005.0, 995.0], 5.0),
            ),
            (
                "b".into(),
                "http://b/".into(),
                rounds(&[500.0, 505.0, 495.0, 502.0, 498.0], 10.0),
            ),
        ];
        // b's p50 differs by round so the U test has something to rank.
        let mut runs = runs;
        for (k, s) in runs[1].2.iter_mut().enumerate() {
            s.latency.percentiles.p50 = Some(10.0 + k as f64 * 0.1);
        }
        for (k, s) in runs[0].2.iter_mut().enumerate() {
            s.latency.percentiles.p50 = Some(5.0 + k as f64 * 0.1);
        }
        let v = versus(&runs, 0, 0.05, 0.02);
        let rps = row(&v, 1, Measure::Rps).change.clone().unwrap();
        assert!((rps.estimate - 0.5).abs() < 0.01, "{rps:?}");
        assert_eq!(rps.verdict, Outcome::Worse);
        assert!((rps.p - 2.0 / 252.0).abs() < 1e-12);
        let (lo, hi) = rps.interval.unwrap();
        assert!(
            lo <= rps.estimate && rps.estimate <= hi && hi < 1.0,
            "{lo} {hi}"
        );
        let p50 = row(&v, 1, Measure::Latency(Pct::P50))
            .change
            .clone()
            .unwrap();
        assert!((p50.estimate - 2.0).abs() < 0.05, "{p50:?}");
        assert_eq!(p50.verdict, Outcome::Worse, "higher latency is worse");
        assert!(row(&v, 0, Measure::Rps).change.is_none(), "the reference");
        assert_eq!(row(&v, 0, Measure::Rps).median, Some(1000.0));
        assert_eq!(v.rounds_needed, 4);
        assert!((v.smallest_p - 2.0 / 252.0).abs() < 1e-12);
    }

    #[test]
    fn a_significant_change_within_the_noise_is_the_same() {
        let runs = vec![
            (
                "a".into(),
                "http://a/".into(),
                rounds(&[1000.0, 1001.0, 1002.0, 1003.0], 5.0),
            ),
            (
                "b".into(),
                "http://b/".into(),
                rounds(&[1010.0, 1011.0, 1012.0, 1013.0], 5.0),
            ),
        ];
        let v = versus(&runs, 0, 0.05, 0.02);
        let c = row(&v, 1, Measure::Rps).change.clone().unwrap();
        assert!(c.p <= 0.05, "separated rounds: {}", c.p);
        assert_eq!(c.verdict, Outcome::Same, "1 % is within the 2 % noise");
        let v = versus(&runs, 0, 0.05, 0.001);
        assert_eq!(
            row(&v, 1, Measure::Rps).change.clone().unwrap().verdict,
            Outcome::Better
        );
    }

    #[test]
    fn three_rounds_cannot_show_a_difference_and_say_so() {
        let runs = vec![
            (
                "a".into(),
                "http://a/".into(),
                rounds(&[1000.0, 1001.0, 1002.0], 5.0),
            ),
            (
                "b".into(),
                "http://b/".into(),
                rounds(&[500.0, 501.0, 502.0], 5.0),
            ),
        ];
        let v = versus(&runs, 0, 0.05, 0.02);
        assert!((v.smallest_p - 0.1).abs() < 1e-12);
        assert_eq!(
            row(&v, 1, Measure::Rps).change.clone().unwrap().verdict,
            Outcome::Same
        );
    }
}
