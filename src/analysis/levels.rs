//! The 11 levels that colour the report, and the word each latency gets. Without `--slo` they
//! are bands of the run's own percentiles, named by their bounds ("<=p95"), never by a
//! judgement the run cannot support; with latency targets every word is relative to a target
//! ("far under", "under", "near", "over" slo p99), so that a word agrees with the verdict
//! beside it. Pure: no rendering here.

use serde::{Deserialize, Serialize};

use super::slo::Pct;
use crate::stats::Percentiles;

/// What each band's bound is made of, without targets: a percentile times a factor. Band i is
/// "at most bound i"; the last band is everything above the last bound.
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

/// With targets: the colour level of a latency is the first of these ratios to its target
/// that it does not exceed (the last level is above three times the target).
pub const LEVEL_RATIOS: [f64; 10] = [0.1, 0.25, 0.4, 0.55, 0.75, 0.9, 1.0, 1.5, 2.0, 3.0];

/// The word of each colour level against a target: at most a quarter of it, three quarters,
/// the target itself, above it. "over" is exactly a failed `--slo` verdict.
pub const LEVEL_WORDS: [(&str, f64); 4] = [
    ("far under", 0.25),
    ("under", 0.75),
    ("near", 1.0),
    ("over", f64::INFINITY),
];

/// One latency target, as the report shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// "p50", "p99.9"...
    pub percentile: String,
    pub ms: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
#[expect(
    clippy::large_enum_variant,
    reason = "one per report, never in a collection"
)]
pub enum Levels {
    /// Bands of this run's own percentiles (no latency target).
    Relative {
        /// Upper bound in ms of each band but the last.
        bounds_ms: [f64; 10],
        /// How each bound was made, e.g. "p25 x 0.5".
        basis: [String; 10],
        /// Each band's name: "<=p25x0.5" .. "<=p99x3", ">p99x3".
        names: [String; 11],
    },
    /// Words against the `--slo` latency targets, lowest percentile first.
    Slo { targets: Vec<Target> },
}

/// Where a latency falls: its colour (0 = best .. 10 = worst) and the word for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    pub index: usize,
    /// "near slo p99", or the band ("<=p95").
    pub name: String,
    /// Where a line has little room: the word alone against a single target ("near"), with
    /// the percentile against one of several ("near p99").
    pub short: String,
}

impl Levels {
    /// Bands of `run` without targets, words against `targets` (percentile, ms) with them;
    /// `None` when there is neither a target nor a completed response.
    pub fn new(run: &Percentiles, targets: &[(Pct, f64)]) -> Option<Levels> {
        if !targets.is_empty() {
            let mut targets: Vec<(Pct, f64)> = targets.to_vec();
            targets.sort_by_key(|(p, _)| p.rank());
            return Some(Levels::Slo {
                targets: targets
                    .into_iter()
                    .map(|(p, ms)| Target {
                        percentile: p.key().into(),
                        ms,
                    })
                    .collect(),
            });
        }
        let mut bounds_ms = [0.0; 10];
        let mut basis: [String; 10] = Default::default();
        let mut names: [String; 11] = Default::default();
        for (i, &(pct, factor)) in BASIS.iter().enumerate() {
            // Percentiles rise, so the bounds do; the max keeps them so whatever a file holds.
            let prev = if i > 0 { bounds_ms[i - 1] } else { 0.0 };
            bounds_ms[i] = (pct.of(run)? * factor).max(prev);
            basis[i] = match factor == 1.0 {
                true => pct.key().to_string(),
                false => format!("{} x {factor}", pct.key()),
            };
            names[i] = format!("<={}", basis[i].replace(" x ", "x"));
        }
        names[10] = format!(">{}", basis[9].replace(" x ", "x"));
        Some(Levels::Relative {
            bounds_ms,
            basis,
            names,
        })
    }

    /// The level of a latency that belongs to no percentile (a histogram bar): with targets,
    /// against the first target it does not exceed, or the highest.
    pub fn of_latency(&self, ms: f64) -> Standing {
        match self {
            Levels::Relative { .. } => self.band(ms),
            Levels::Slo { targets } => {
                let t = targets
                    .iter()
                    .find(|t| ms <= t.ms)
                    .or(targets.last())
                    .expect("Slo levels have a target");
                against(ms, t, targets.len() == 1)
            }
        }
    }

    /// The level of a percentile of the run (`key` as `Pct::key`): with targets, against its
    /// own target, or the next one above it, or the highest.
    pub fn of_percentile(&self, key: &str, ms: f64) -> Standing {
        match self {
            Levels::Relative { .. } => self.band(ms),
            Levels::Slo { targets } => {
                let rank = Pct::from_key(key).map_or(usize::MAX, Pct::rank);
                let t = targets
                    .iter()
                    .find(|t| Pct::from_key(&t.percentile).map_or(0, Pct::rank) >= rank)
                    .or(targets.last())
                    .expect("Slo levels have a target");
                against(ms, t, targets.len() == 1)
            }
        }
    }

    fn band(&self, ms: f64) -> Standing {
        let Levels::Relative {
            bounds_ms, names, ..
        } = self
        else {
            unreachable!("bands are relative levels")
        };
        let index = bounds_ms.iter().position(|&b| ms <= b).unwrap_or(10);
        Standing {
            index,
            name: names[index].clone(),
            short: names[index].clone(),
        }
    }
}

/// `ms` against one target: the colour by its ratio, the word by the same ratio, and "over"
/// exactly when it exceeds the target (compared directly, not through a rounded ratio).
fn against(ms: f64, t: &Target, single: bool) -> Standing {
    let over = ms > t.ms;
    let ratio = match (t.ms > 0.0, over) {
        (true, _) => ms / t.ms,
        (false, true) => f64::INFINITY,
        (false, false) => 1.0,
    };
    let mut index = LEVEL_RATIOS.iter().position(|&r| ratio <= r).unwrap_or(10);
    if over {
        index = index.max(7);
    } else {
        index = index.min(6);
    }
    let word = match over {
        true => "over",
        false => LEVEL_WORDS
            .iter()
            .find(|(_, r)| ratio <= *r)
            .map_or("near", |w| w.0),
    };
    Standing {
        index,
        name: format!("{word} slo {}", t.percentile),
        short: match single {
            true => word.to_string(),
            false => format!("{word} {}", t.percentile),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::slo::{Measured, SloSpec, verdicts};

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

    fn targets(slo: &str) -> Vec<(Pct, f64)> {
        let spec: SloSpec = slo.parse().unwrap();
        spec.latency
            .iter()
            .map(|&(p, d)| (p, d.as_secs_f64() * 1e3))
            .collect()
    }

    fn levels(slo: &str) -> Levels {
        Levels::new(&Percentiles::default(), &targets(slo)).unwrap()
    }

    #[test]
    fn relative_bounds_follow_the_rule() {
        let l = Levels::new(&pcts(1.0, 2.0, 3.0, 4.0, 5.0, 10.0), &[]).unwrap();
        let Levels::Relative {
            bounds_ms,
            basis,
            names,
        } = &l
        else {
            panic!("{l:?}")
        };
        assert_eq!(
            bounds_ms,
            &[0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0, 30.0]
        );
        assert_eq!(basis[0], "p25 x 0.5");
        assert_eq!(basis[6], "p99");
        // Bands of the run, not verdicts on it.
        assert_eq!(
            names,
            &[
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
        let named: Vec<_> = [
            0.1, 0.5, 0.9, 2.0, 2.5, 3.5, 4.5, 9.0, 12.0, 19.0, 25.0, 31.0,
        ]
        .iter()
        .map(|&ms| l.of_latency(ms).name)
        .collect();
        assert_eq!(
            named,
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
        // A percentile is in its own band, whatever its value: no word judges it.
        assert_eq!(l.of_percentile("p99", 10.0).name, "<=p99");
    }

    #[test]
    fn a_fast_run_is_far_under_a_loose_target() {
        // p99 = 0.07 ms against p99=250ms: far under, whatever the run's own shape.
        let l = Levels::new(
            &pcts(0.02, 0.03, 0.04, 0.05, 0.06, 0.07),
            &targets("p99=250ms"),
        )
        .unwrap();
        for (key, ms) in [
            ("p50", 0.03),
            ("p95", 0.06),
            ("p99", 0.07),
            ("p99.99", 0.21),
        ] {
            let lv = l.of_percentile(key, ms);
            assert_eq!(lv.name, "far under slo p99", "{key}");
            assert!(lv.index <= 1, "{key}: {lv:?}");
        }
        assert_eq!(l.of_latency(0.05).name, "far under slo p99");
        assert_eq!(l.of_latency(0.05).short, "far under");
    }

    /// Every word at the µs scale and at the second scale: the same ratios, the same words.
    #[test]
    fn the_words_hold_at_microseconds_and_at_seconds() {
        for (slo, t) in [("p99=250us", 0.25), ("p99=2s", 2000.0)] {
            let l = levels(slo);
            let word = |ratio: f64| l.of_percentile("p99", t * ratio).name;
            assert_eq!(word(0.0), "far under slo p99", "{slo}");
            assert_eq!(word(0.2), "far under slo p99", "{slo}");
            assert_eq!(word(0.25), "far under slo p99", "{slo}");
            assert_eq!(word(0.5), "under slo p99", "{slo}");
            assert_eq!(word(0.75), "under slo p99", "{slo}");
            assert_eq!(word(0.9), "near slo p99", "{slo}");
            assert_eq!(word(1.0), "near slo p99", "{slo}");
            assert_eq!(word(1.001), "over slo p99", "{slo}");
            assert_eq!(word(40.0), "over slo p99", "{slo}");
            // Colours rise with the latency and cross to the warm half exactly at the target.
            let idx: Vec<usize> = [0.05, 0.2, 0.3, 0.5, 0.7, 0.8, 1.0, 1.2, 1.8, 2.5, 4.0]
                .iter()
                .map(|&r| l.of_percentile("p99", t * r).index)
                .collect();
            assert_eq!(idx, (0..=10).collect::<Vec<_>>(), "{slo}");
        }
    }

    /// "over" is a failed verdict and nothing else, at every scale: the word beside a
    /// percentile never disagrees with the Thresholds table.
    #[test]
    fn over_is_exactly_a_failed_verdict() {
        for slo in [
            "p50=40us,p99=250us",
            "p50=20ms,p99=250ms",
            "p90=1s,p99.9=3s",
        ] {
            let spec: SloSpec = slo.parse().unwrap();
            let l = levels(slo);
            for &(pct, d) in &spec.latency {
                let t = d.as_secs_f64() * 1e3;
                for ratio in [0.0, 0.3, 0.99, 1.0, 1.0 + 1e-12, 1.01, 3.0, 1e6] {
                    let v = t * ratio;
                    let mut p = Percentiles::default();
                    set(&mut p, pct, v);
                    let pass = verdicts(
                        &spec,
                        &Measured {
                            percentiles: &p,
                            error_rate: None,
                            rps: 0.0,
                        },
                    )
                    .iter()
                    .find(|x| x.name == pct.key())
                    .unwrap()
                    .pass;
                    let name = l.of_percentile(pct.key(), v).name;
                    assert_eq!(
                        name.starts_with("over"),
                        !pass,
                        "{slo} {} {v}: {name}",
                        pct.key()
                    );
                    assert!(name.ends_with(pct.key()), "{name}");
                }
            }
        }
    }

    fn set(p: &mut Percentiles, pct: Pct, v: f64) {
        let slot = match pct {
            Pct::P10 => &mut p.p10,
            Pct::P25 => &mut p.p25,
            Pct::P50 => &mut p.p50,
            Pct::P75 => &mut p.p75,
            Pct::P90 => &mut p.p90,
            Pct::P95 => &mut p.p95,
            Pct::P99 => &mut p.p99,
            Pct::P999 => &mut p.p99_9,
            Pct::P9999 => &mut p.p99_99,
        };
        *slot = Some(v);
    }

    #[test]
    fn each_value_is_read_against_the_target_that_concerns_it() {
        let l = levels("p99=250ms,p50=20ms");
        // A percentile: its own target, the next one above, or the highest.
        assert_eq!(l.of_percentile("p10", 1.0).name, "far under slo p50");
        assert_eq!(l.of_percentile("p50", 25.0).name, "over slo p50");
        assert_eq!(l.of_percentile("p75", 25.0).name, "far under slo p99");
        assert_eq!(l.of_percentile("p99.9", 300.0).name, "over slo p99");
        // A bar: the first target it does not exceed.
        assert_eq!(l.of_latency(10.0).name, "under slo p50");
        assert_eq!(l.of_latency(30.0).name, "far under slo p99");
        assert_eq!(l.of_latency(240.0).name, "near slo p99");
        assert_eq!(l.of_latency(900.0).name, "over slo p99");
        assert_eq!(l.of_latency(900.0).short, "over p99");
    }

    #[test]
    fn a_zero_target_is_met_only_by_zero() {
        let l = levels("p99=0ms");
        assert_eq!(l.of_percentile("p99", 0.0).name, "near slo p99");
        assert_eq!(l.of_percentile("p99", 0.001).name, "over slo p99");
    }

    #[test]
    fn no_data_and_no_targets_means_no_levels() {
        assert!(Levels::new(&Percentiles::default(), &[]).is_none());
    }
}
