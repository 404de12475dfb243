//! `spate sweep`'s judgement of one run per concurrency level: each level's figures, the knee
//! (the fewest connections that reach 95 % of the peak rate, among every level without errors),
//! a flag on levels whose tail is long both relatively and absolutely, and how the tail grows
//! past the knee; with a reference URL, the overhead at each level and the reference's own
//! knee. Typed only.

use serde::Serialize;

use super::{Finding, Measure, Pct};
use crate::stats::Summary;

/// A level reaches the peak at this share of the highest rate: past it, more connections add
/// little but queueing.
pub const KNEE_SHARE: f64 = 0.95;

/// A level whose error rate (failed or >= 400, % of attempted) is above this does not count
/// towards the peak: a server that fails fast is not faster.
pub const KNEE_MAX_ERRORS_PCT: f64 = 1.0;

/// A level's tail is flagged when its p99 is more than this many times its p50...
pub const TAIL_RATIO: f64 = 10.0;

/// ... and more than this many ms above it: a ratio alone misfires when p50 is tens of µs,
/// where ten times p50 is still a fast response. A flagged level still counts towards the peak.
pub const TAIL_MIN_MS: f64 = 1.0;

/// Why a level does not count towards the peak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Excluded {
    /// No response, or more than `KNEE_MAX_ERRORS_PCT` errors.
    Errors,
}

/// A long tail at one level: p99 over `TAIL_RATIO` times p50 and over `TAIL_MIN_MS` above it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tail {
    /// p99 / p50.
    pub ratio: f64,
    /// p99 - p50, ms.
    pub added_ms: f64,
}

/// The figures of one run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Figures {
    pub rps: f64,
    pub p50_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub p999_ms: Option<f64>,
    /// Failed or status >= 400, % of attempted.
    pub errors_pct: Option<f64>,
    /// spate's own CPU per completed response, µs.
    pub cpu_us: Option<f64>,
    /// spate's own verdict was that it may have limited this run.
    pub spate_limited: bool,
}

impl Figures {
    pub fn of(s: &Summary) -> Figures {
        let m = |m: Measure| m.of(s);
        Figures {
            rps: s.totals.requests_per_sec,
            p50_ms: m(Measure::Latency(Pct::P50)),
            p90_ms: m(Measure::Latency(Pct::P90)),
            p99_ms: m(Measure::Latency(Pct::P99)),
            p999_ms: m(Measure::Latency(Pct::P999)),
            errors_pct: m(Measure::Errors),
            cpu_us: m(Measure::Cpu),
            spate_limited: super::findings(s)
                .iter()
                .any(|f| matches!(f, Finding::SpateLimited { .. })),
        }
    }

    /// Why this run does not count towards the peak, if it does not.
    pub fn excluded(&self) -> Option<Excluded> {
        match self.rps <= 0.0 || self.errors_pct.is_none_or(|e| e > KNEE_MAX_ERRORS_PCT) {
            true => Some(Excluded::Errors),
            false => None,
        }
    }

    /// Its tail, if long in both senses.
    pub fn tail(&self) -> Option<Tail> {
        let (p50, p99) = self.p50_ms.zip(self.p99_ms)?;
        let added_ms = p99 - p50;
        (p99 > TAIL_RATIO * p50 && added_ms > TAIL_MIN_MS).then(|| Tail {
            ratio: if p50 > 0.0 { p99 / p50 } else { f64::INFINITY },
            added_ms,
        })
    }
}

/// The target against the reference at one level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Overhead {
    /// Target's rate / reference's.
    pub rps_ratio: Option<f64>,
    /// Target's p50 - reference's, ms.
    pub p50_ms: Option<f64>,
    /// Target's p99 - reference's, ms.
    pub p99_ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Level {
    pub connections: u32,
    #[serde(flatten)]
    pub figures: Figures,
    /// The reference URL's run at this level, with --vs.
    pub vs: Option<Figures>,
    pub overhead: Option<Overhead>,
    /// Why the target's run at this level does not count towards the peak, if it does not.
    pub excluded: Option<Excluded>,
    /// The target's tail at this level, if long.
    pub tail: Option<Tail>,
}

/// Where more connections stop adding throughput.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Knee {
    pub connections: u32,
    pub rps: f64,
    pub p99_ms: Option<f64>,
    /// The highest rate among the levels that count, and the first level that reached it.
    pub peak_rps: f64,
    pub peak_connections: u32,
    /// The most connections swept without errors (if more than the knee's): how the tail and
    /// the rate there compare with the knee's. A level that failed is no comparison: its rate
    /// came from failing fast.
    pub last: Option<Past>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Past {
    pub connections: u32,
    /// Its rate / the knee's.
    pub rps_ratio: f64,
    /// Its p99 / the knee's.
    pub p99_ratio: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    pub levels: Vec<Level>,
    /// `None` when no level counts.
    pub knee: Option<Knee>,
    /// The reference's knee, with --vs.
    pub vs_knee: Option<Knee>,
    /// Levels at which spate's own verdict was that it may have limited a run.
    pub spate_limited: Vec<u32>,
}

/// The knee of `(connections, figures)` in ascending connections.
pub fn knee(levels: &[(u32, Figures)]) -> Option<Knee> {
    let sound = || levels.iter().filter(|(_, f)| f.excluded().is_none());
    // The first level at the highest rate: later ones at the same rate add only waiting.
    let (peak_connections, peak) = sound().reduce(|a, b| if b.1.rps > a.1.rps { b } else { a })?;
    let (connections, at) = sound().find(|(_, f)| f.rps >= KNEE_SHARE * peak.rps)?;
    let (last_c, last) = sound().next_back()?;
    Some(Knee {
        connections: *connections,
        rps: at.rps,
        p99_ms: at.p99_ms,
        peak_rps: peak.rps,
        peak_connections: *peak_connections,
        last: (last_c > connections).then(|| Past {
            connections: *last_c,
            rps_ratio: last.rps / at.rps,
            p99_ratio: last
                .p99_ms
                .zip(at.p99_ms)
                .filter(|(_, k)| *k > 0.0)
                .map(|(l, k)| l / k),
        }),
    })
}

/// One run per level (connections ascending), and with --vs the reference's run at each.
pub fn sweep(runs: &[(u32, Summary, Option<Summary>)]) -> Sweep {
    let levels: Vec<Level> = runs
        .iter()
        .map(|(c, s, vs)| {
            let figures = Figures::of(s);
            let vs = vs.as_ref().map(Figures::of);
            Level {
                connections: *c,
                excluded: figures.excluded(),
                tail: figures.tail(),
                figures,
                overhead: vs.map(|r| Overhead {
                    rps_ratio: (r.rps > 0.0).then(|| figures.rps / r.rps),
                    p50_ms: figures.p50_ms.zip(r.p50_ms).map(|(t, r)| t - r),
                    p99_ms: figures.p99_ms.zip(r.p99_ms).map(|(t, r)| t - r),
                }),
                vs,
            }
        })
        .collect();
    let target: Vec<(u32, Figures)> = levels.iter().map(|l| (l.connections, l.figures)).collect();
    let reference: Vec<(u32, Figures)> = levels
        .iter()
        .filter_map(|l| l.vs.map(|f| (l.connections, f)))
        .collect();
    Sweep {
        knee: knee(&target),
        vs_knee: if reference.is_empty() {
            None
        } else {
            knee(&reference)
        },
        spate_limited: levels
            .iter()
            .filter(|l| l.figures.spate_limited || l.vs.is_some_and(|v| v.spate_limited))
            .map(|l| l.connections)
            .collect(),
        levels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(rps: f64, p99: f64, errors: f64) -> Figures {
        Figures {
            rps,
            p50_ms: Some(p99 / 2.0),
            p90_ms: Some(p99),
            p99_ms: Some(p99),
            p999_ms: Some(p99),
            errors_pct: Some(errors),
            cpu_us: None,
            spate_limited: false,
        }
    }

    #[test]
    fn the_knee_is_the_fewest_connections_at_95_percent_of_the_peak() {
        // At most 8 served at once, 20 ms each: 50 req/s a connection up to 8.
        let levels = [
            (1, f(50.0, 20.0, 0.0)),
            (2, f(100.0, 20.0, 0.0)),
            (4, f(199.0, 20.0, 0.0)),
            (8, f(392.0, 21.0, 0.0)),
            (16, f(400.0, 41.0, 0.0)),
            (32, f(400.0, 82.0, 0.0)),
        ];
        let k = knee(&levels).unwrap();
        assert_eq!((k.connections, k.rps, k.p99_ms), (8, 392.0, Some(21.0)));
        assert_eq!(
            (k.peak_connections, k.peak_rps),
            (16, 400.0),
            "the first at the peak"
        );
        let past = k.last.unwrap();
        assert_eq!(past.connections, 32);
        assert!((past.p99_ratio.unwrap() - 82.0 / 21.0).abs() < 1e-12);
        assert!((past.rps_ratio - 400.0 / 392.0).abs() < 1e-12);
    }

    #[test]
    fn levels_that_fail_do_not_set_the_peak_and_a_knee_at_the_end_has_nothing_past_it() {
        let levels = [
            (10, f(1000.0, 5.0, 0.0)),
            (100, f(2000.0, 9.0, 0.5)),
            (1000, f(9000.0, 2.0, 60.0)),
        ];
        let k = knee(&levels).unwrap();
        assert_eq!((k.connections, k.peak_connections), (100, 100));
        assert_eq!(
            k.last, None,
            "1,000 failed: nothing sound lies past the knee"
        );
        let mut more = levels.to_vec();
        more.insert(2, (500, f(2010.0, 30.0, 0.0)));
        let k = knee(&more).unwrap();
        assert_eq!(
            k.last.unwrap().connections,
            500,
            "the last level without errors"
        );
        let rising = [(1, f(10.0, 1.0, 0.0)), (2, f(20.0, 1.0, 0.0))];
        let k = knee(&rising).unwrap();
        assert_eq!(k.connections, 2);
        assert_eq!(k.last, None);
        let failing = [(1, f(10.0, 1.0, 50.0)), (2, f(0.0, 1.0, 0.0))];
        assert_eq!(knee(&failing), None);
        assert_eq!(failing[0].1.excluded(), Some(Excluded::Errors));
    }

    /// The caddy case: p50 in tens of µs, so p99 is "over 10x p50" at fast levels; the peak
    /// and the knee still come from every level without errors, at µs and at second scales.
    #[test]
    fn a_long_tail_is_flagged_and_still_counts() {
        for scale in [0.001, 1.0, 1000.0] {
            let at = |rps: f64, p50: f64, p99: f64| {
                let mut x = f(rps, p99 * scale, 0.0);
                x.p50_ms = Some(p50 * scale);
                x
            };
            let levels = [
                (1, at(26_700.0, 0.03, 0.05)),
                (10, at(50_000.0, 0.04, 0.9)),
                (50, at(52_000.0, 0.2, 3.0)),
                (200, at(51_000.0, 1.0, 4.0)),
            ];
            let k = knee(&levels).unwrap();
            assert_eq!((k.connections, k.peak_connections), (10, 50), "x{scale}");
            assert!(levels.iter().all(|(_, f)| f.excluded().is_none()));
            let tails: Vec<bool> = levels.iter().map(|(_, f)| f.tail().is_some()).collect();
            // 22x p50 at 10 connections and 15x at 50: long only where that is also more
            // than a millisecond above p50.
            let want = match scale {
                0.001 => [false, false, false, false],
                1.0 => [false, false, true, false],
                _ => [false, true, true, false],
            };
            assert_eq!(tails, want, "x{scale}");
        }
        let mut t = f(100.0, 400.0, 0.0);
        t.p50_ms = Some(10.0);
        let tail = t.tail().unwrap();
        assert_eq!((tail.ratio, tail.added_ms), (40.0, 390.0));
        // Queueing lengthens p50 and p99 alike: no flag.
        assert_eq!(f(800.0, 300.0, 0.0).tail(), None);
    }
}
