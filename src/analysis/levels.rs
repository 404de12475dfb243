//! The 11 levels that colour the report. Without `--slo` they are bands of the run's own
//! percentiles, named by their bounds ("<=p95"), never by a judgement the run cannot support;
//! with latency targets, the target-made bounds sit exactly on the targets and the levels carry
//! the SLO words (elite .. violation). Bounds always rise with the level.

use serde::{Deserialize, Serialize};

use super::slo::{Pct, SloSpec};
use crate::stats::Percentiles;

/// The levels' words, used with `--slo` latency targets.
pub const LEVEL_NAMES: [&str; 11] = [
    "elite",
    "excellent",
    "good",
    "normal",
    "acceptable",
    "degraded",
    "slow",
    "very slow",
    "critical",
    "severe",
    "violation",
];

/// What each bound is made of: a percentile times a factor. Level i is "at most bound i";
/// the last level (violation) is everything above the last bound.
const BASIS: [(Pct, f64); 10] = [
    (Pct::P25, 0.5),
    (Pct::P25, 1.0),
    (Pct::P50, 1.0),
    (Pct::P75, 1.0),
    (Pct::P90, 1.0),
    (Pct::P95, 1.0),
    (Pct::P99, 1.0),
    (Pct::P99, 1.5),
    (Pct::P99, 2.0),
    (Pct::P99, 3.0),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LevelMode {
    /// Bounds from this run's own percentiles.
    Relative,
    /// At least one bound from an `--slo` latency target.
    Slo,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Levels {
    pub mode: LevelMode,
    /// Upper bound in ms of each level but the last.
    pub bounds_ms: [f64; 10],
    /// How each bound was made, e.g. "p25 x 0.5" or "slo p99 x 2".
    pub basis: [String; 10],
    /// Each level's name: the SLO words with targets; without, the band it is ("<=p25x0.5",
    /// "<=p99", ">p99x3").
    pub names: [String; 11],
}

impl Levels {
    /// `None` when a bound has neither a run value nor a target (no completed response).
    pub fn new(run: &Percentiles, slo: &SloSpec) -> Option<Levels> {
        let mode = if slo.latency.is_empty() {
            LevelMode::Relative
        } else {
            LevelMode::Slo
        };
        let mut bounds_ms = [0.0; 10];
        let mut fixed = [false; 10];
        let mut basis: [String; 10] = Default::default();
        let mut bands: [String; 11] = Default::default();
        for (i, &(pct, factor)) in BASIS.iter().enumerate() {
            let (value, from) = match slo.target_ms(pct) {
                Some(t) => (t, "slo "),
                None => (pct.of(run)?, ""),
            };
            fixed[i] = !from.is_empty();
            bounds_ms[i] = value * factor;
            basis[i] = if factor == 1.0 {
                format!("{from}{}", pct.key())
            } else {
                format!("{from}{} x {factor}", pct.key())
            };
            bands[i] = format!("<={}", basis[i].replace(" x ", "x"));
        }
        bands[10] = format!(">{}", basis[9].replace(" x ", "x"));
        // Targets rise with the percentile (`SloSpec` refuses others), so the bounds made from
        // them do too, and they stay exactly where they are: a run value between two of them
        // is held inside them.
        for i in 0..10 {
            if fixed[i] {
                continue;
            }
            let below = (0..i)
                .rev()
                .find(|&j| fixed[j])
                .map_or(0.0, |j| bounds_ms[j]);
            let above = (i + 1..10)
                .find(|&j| fixed[j])
                .map_or(f64::INFINITY, |j| bounds_ms[j]);
            let prev = if i > 0 { bounds_ms[i - 1] } else { 0.0 };
            bounds_ms[i] = bounds_ms[i].max(below).max(prev).min(above);
        }
        let names = match mode {
            LevelMode::Slo => LEVEL_NAMES.map(String::from),
            LevelMode::Relative => bands,
        };
        Some(Levels {
            mode,
            bounds_ms,
            basis,
            names,
        })
    }

    /// The level (0 = elite .. 10 = violation) of a latency in ms.
    pub fn level_of(&self, ms: f64) -> usize {
        self.bounds_ms.iter().position(|&b| ms <= b).unwrap_or(10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pcts(p25: f64, p50: f64, p75: f64, p90: f64, p95: f64, p99: f64) -> Percentiles {
        Percentiles {
            p10: Some(p25 / 2.0),
            p25: Some(p25),
            p50: Some(p50),
            p75: Some(p75),
            p90: Some(p90),
            p95: Some(p95),
            p99: Some(p99),
            p99_9: Some(p99 * 2.0),
            p99_99: Some(p99 * 3.0),
        }
    }

    #[test]
    fn relative_bounds_follow_the_rule() {
        let l = Levels::new(&pcts(1.0, 2.0, 3.0, 4.0, 5.0, 10.0), &SloSpec::default()).unwrap();
        assert_eq!(l.mode, LevelMode::Relative);
        assert_eq!(
            l.bounds_ms,
            [0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0, 30.0]
        );
        assert_eq!(l.basis[0], "p25 x 0.5");
        assert_eq!(l.basis[6], "p99");
        // Bands of the run, not verdicts on it.
        assert_eq!(
            l.names,
            [
                "<=p25x0.5",
                "<=p25",
                "<=p50",
                "<=p75",
                "<=p90",
                "<=p95",
                "<=p99",
                "<=p99x1.5",
                "<=p99x2",
                "<=p99x3",
                ">p99x3"
            ]
        );
        let names: Vec<_> = [
            0.1, 0.5, 0.9, 2.0, 2.5, 3.5, 4.5, 9.0, 12.0, 19.0, 25.0, 31.0,
        ]
        .iter()
        .map(|&ms| l.names[l.level_of(ms)].as_str())
        .collect();
        assert_eq!(
            names,
            [
                "<=p25x0.5",
                "<=p25x0.5",
                "<=p25",
                "<=p50",
                "<=p75",
                "<=p90",
                "<=p95",
                "<=p99",
                "<=p99x1.5",
                "<=p99x2",
                "<=p99x3",
                ">p99x3"
            ]
        );
    }

    #[test]
    fn targets_replace_run_values_and_keep_levels_rising() {
        let slo: SloSpec = "p50=20ms,p99=250ms".parse().unwrap();
        let l = Levels::new(&pcts(1.0, 2.0, 300.0, 400.0, 500.0, 600.0), &slo).unwrap();
        assert_eq!(l.mode, LevelMode::Slo);
        assert_eq!(l.bounds_ms[2], 20.0, "p50 target");
        assert_eq!(l.bounds_ms[6], 250.0, "p99 target");
        // The run's p75..p95 (300..500 ms) exceed the p99 target: held at 250.
        assert_eq!(&l.bounds_ms[3..6], &[250.0, 250.0, 250.0]);
        assert_eq!(l.bounds_ms[9], 750.0);
        assert_eq!(l.basis[6], "slo p99");
        assert_eq!(l.names[6], "slow");
    }

    #[test]
    fn targets_are_bounds_exactly_whatever_the_run() {
        // The run's p75 (0.969 ms) is below the p50 target: it used to pull the p50 bound down
        // to 0.969 ms. Now it is raised to the target instead.
        let slo: SloSpec = "p50=1ms,p99=5ms".parse().unwrap();
        let l = Levels::new(&pcts(0.5, 0.8, 0.969, 1.2, 1.5, 3.0), &slo).unwrap();
        assert_eq!(l.bounds_ms[2], 1.0);
        assert_eq!(l.bounds_ms[3], 1.0, "p75 held at the p50 target");
        assert_eq!(l.bounds_ms[6], 5.0);
        assert_eq!(&l.bounds_ms[7..], &[7.5, 10.0, 15.0]);
        assert_eq!(
            &l.bounds_ms[..2],
            &[0.25, 0.5],
            "run values below the first target"
        );
        for w in l.bounds_ms.windows(2) {
            assert!(w[0] <= w[1], "{:?}", l.bounds_ms);
        }
        for w in l.bounds_ms.windows(2) {
            assert!(w[0] <= w[1]);
        }
    }

    #[test]
    fn no_data_and_no_targets_means_no_levels() {
        let empty = Percentiles::default();
        assert!(Levels::new(&empty, &SloSpec::default()).is_none());
    }
}
