//! `--slo`: latency targets per percentile, a maximum error rate and a minimum throughput, and
//! the PASS/FAIL verdict of each against a run. Parsing is strict; every error names the part.

use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::stats::Percentiles;

/// A percentile the report shows, usable as a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pct {
    P10,
    P25,
    P50,
    P75,
    P90,
    P95,
    P99,
    P999,
    P9999,
}

impl Pct {
    pub(super) const ALL: [Pct; 9] = [
        Pct::P10,
        Pct::P25,
        Pct::P50,
        Pct::P75,
        Pct::P90,
        Pct::P95,
        Pct::P99,
        Pct::P999,
        Pct::P9999,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Pct::P10 => "p10",
            Pct::P25 => "p25",
            Pct::P50 => "p50",
            Pct::P75 => "p75",
            Pct::P90 => "p90",
            Pct::P95 => "p95",
            Pct::P99 => "p99",
            Pct::P999 => "p99.9",
            Pct::P9999 => "p99.99",
        }
    }

    /// Its place among the percentiles, lowest first.
    pub fn rank(self) -> usize {
        Pct::ALL.iter().position(|&p| p == self).unwrap_or(0)
    }

    /// The percentile `key` names ("p99.9"), if it is one.
    pub fn from_key(key: &str) -> Option<Pct> {
        Pct::ALL.iter().copied().find(|p| p.key() == key)
    }

    /// This percentile of a run, in ms.
    pub fn of(self, p: &Percentiles) -> Option<f64> {
        match self {
            Pct::P10 => p.p10,
            Pct::P25 => p.p25,
            Pct::P50 => p.p50,
            Pct::P75 => p.p75,
            Pct::P90 => p.p90,
            Pct::P95 => p.p95,
            Pct::P99 => p.p99,
            Pct::P999 => p.p99_9,
            Pct::P9999 => p.p99_99,
        }
    }
}

/// Targets given with `--slo`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SloSpec {
    /// At most this latency at this percentile.
    pub latency: Vec<(Pct, Duration)>,
    /// At most this share (0..=1) of attempted requests failed or got a status of 400 or more.
    pub errors: Option<f64>,
    /// At least this many completed responses per second.
    pub rps: Option<f64>,
}

impl SloSpec {
    pub fn is_empty(&self) -> bool {
        self.latency.is_empty() && self.errors.is_none() && self.rps.is_none()
    }

    /// The latency targets in ms, lowest percentile first.
    pub fn latency_ms(&self) -> Vec<(Pct, f64)> {
        self.latency
            .iter()
            .map(|&(p, d)| (p, d.as_secs_f64() * 1e3))
            .collect()
    }
}

/// The targets as `--slo` takes them, exactly ("p50=20ms,p99=250ms,errors=1%,rps=5000"): what a
/// shard records for `spate merge` to judge the job on.
impl std::fmt::Display for SloSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts: Vec<String> = self
            .latency
            .iter()
            .map(|(p, d)| {
                let ns = d.as_nanos();
                let value = match ns {
                    n if n > 0 && n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
                    n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
                    n if n % 1_000 == 0 => format!("{}us", n / 1_000),
                    n => format!("{n}ns"),
                };
                format!("{}={value}", p.key())
            })
            .collect();
        if let Some(e) = self.errors {
            parts.push(format!("errors={}%", e * 100.0));
        }
        if let Some(r) = self.rps {
            parts.push(format!("rps={r}"));
        }
        f.write_str(&parts.join(","))
    }
}

impl FromStr for SloSpec {
    type Err = String;

    /// "p50=20ms,p99=250ms,errors=1%,rps=5000".
    fn from_str(s: &str) -> Result<SloSpec, String> {
        let mut spec = SloSpec::default();
        let mut seen: Vec<&str> = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((key, value)) = part.split_once('=') else {
                return Err(format!(
                    "{part:?} is not KEY=VALUE (e.g. p99=250ms, errors=1%, rps=5000)"
                ));
            };
            let (key, value) = (key.trim(), value.trim());
            if seen.contains(&key) {
                return Err(format!("{key} is given twice"));
            }
            seen.push(key);
            if let Some(pct) = Pct::ALL.iter().find(|p| p.key() == key) {
                let d = crate::units::duration(value).map_err(|e| format!("{key}: {e}"))?;
                spec.latency.push((*pct, d));
            } else if key == "errors" {
                let pct = value
                    .strip_suffix('%')
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .filter(|v| (0.0..=100.0).contains(v))
                    .ok_or_else(|| {
                        format!("errors: {value:?} is not a percentage such as 1% or 0.5%")
                    })?;
                spec.errors = Some(pct / 100.0);
            } else if key == "rps" {
                let rps = value
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v > 0.0)
                    .ok_or_else(|| {
                        format!("rps: {value:?} is not a positive number of requests per second")
                    })?;
                spec.rps = Some(rps);
            } else {
                return Err(format!(
                    "unknown target {key:?}; use p10 p25 p50 p75 p90 p95 p99 p99.9 p99.99, errors or rps"
                ));
            }
        }
        if spec.is_empty() {
            return Err("no target given (e.g. p99=250ms,errors=1%,rps=5000)".into());
        }
        spec.latency
            .sort_by_key(|(p, _)| Pct::ALL.iter().position(|q| q == p));
        if let Some(w) = spec.latency.windows(2).find(|w| w[1].1 < w[0].1) {
            return Err(format!(
                "{}={:?} is below {}={:?}: a higher percentile cannot have a lower target",
                w[1].0.key(),
                w[1].1,
                w[0].0.key(),
                w[0].1
            ));
        }
        Ok(spec)
    }
}

/// One threshold against the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// "p99", "errors" or "rps".
    pub name: String,
    /// "<=" or ">=".
    pub op: String,
    pub target: f64,
    /// "ms", "%" or "req/s".
    pub unit: String,
    /// `None` when there was nothing to measure (no completed response).
    pub measured: Option<f64>,
    pub pass: bool,
}

/// What the verdicts are judged on.
pub struct Measured<'a> {
    pub percentiles: &'a Percentiles,
    /// Failed attempts plus responses with a status of 400 or more, over attempts; `None` with no
    /// attempt.
    pub error_rate: Option<f64>,
    pub rps: f64,
}

/// `--stages` with `--slo`: one stage's verdicts on the run's targets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageVerdicts {
    /// The stage, as its row numbers it.
    pub stage: u32,
    /// Every target held in it.
    pub pass: bool,
    pub thresholds: Vec<Verdict>,
}

/// Each stage row judged on `spec`: its percentiles, its error rate (failures and statuses of
/// 400 or more over the requests sent in its seconds) and its achieved rate. Empty without
/// targets.
pub fn stage_verdicts(spec: &SloSpec, rows: &[crate::stats::StageRow]) -> Vec<StageVerdicts> {
    if spec.is_empty() {
        return Vec::new();
    }
    rows.iter()
        .map(|r| {
            let thresholds = verdicts(
                spec,
                &Measured {
                    percentiles: &r.percentiles_ms,
                    error_rate: (r.sent > 0)
                        .then(|| (r.failed + r.error_status) as f64 / r.sent as f64),
                    rps: r.achieved_rate,
                },
            );
            StageVerdicts {
                stage: r.stage,
                pass: thresholds.iter().all(|v| v.pass),
                thresholds,
            }
        })
        .collect()
}

/// The latency targets (percentile, ms) that `verdicts` were judged on: what a saved result
/// says its targets were. Anything else in the list is not a latency target.
pub fn latency_targets(verdicts: &[Verdict]) -> Vec<(Pct, f64)> {
    verdicts
        .iter()
        .filter(|v| v.unit == "ms" && v.op == "<=" && v.target.is_finite() && v.target >= 0.0)
        .filter_map(|v| Some((Pct::from_key(&v.name)?, v.target)))
        .collect()
}

pub fn verdicts(spec: &SloSpec, m: &Measured<'_>) -> Vec<Verdict> {
    let mut out = Vec::new();
    for &(pct, d) in &spec.latency {
        let target = d.as_secs_f64() * 1e3;
        let measured = pct.of(m.percentiles);
        out.push(Verdict {
            name: pct.key().into(),
            op: "<=".into(),
            target,
            unit: "ms".into(),
            measured,
            pass: measured.is_some_and(|v| v <= target),
        });
    }
    if let Some(max) = spec.errors {
        let measured = m.error_rate.map(|r| r * 100.0);
        out.push(Verdict {
            name: "errors".into(),
            op: "<=".into(),
            target: max * 100.0,
            unit: "%".into(),
            measured,
            pass: m.error_rate.is_some_and(|r| r <= max),
        });
    }
    if let Some(min) = spec.rps {
        out.push(Verdict {
            name: "rps".into(),
            op: ">=".into(),
            target: min,
            unit: "req/s".into(),
            measured: Some(m.rps),
            pass: m.rps >= min,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(p50: f64, p99: f64) -> Percentiles {
        Percentiles {
            p10: Some(p50),
            p25: Some(p50),
            p50: Some(p50),
            p75: Some(p50),
            p90: Some(p99),
            p95: Some(p99),
            p99: Some(p99),
            p99_9: Some(p99),
            p99_99: Some(p99),
        }
    }

    #[test]
    fn each_stage_is_judged_on_its_own_figures_at_us_and_second_scales() {
        for scale in [0.001, 1.0, 1000.0] {
            let row = |stage, p99: f64, failed, rate| crate::stats::StageRow {
                stage,
                start_s: 0.0,
                duration_s: 1.0,
                target_from: 0.0,
                target_to: 0.0,
                scheduled: None,
                sent: 100,
                completed: 100 - failed,
                error_status: 0,
                failed,
                achieved_rate: rate,
                dropped: None,
                lag_p99_ms: None,
                latency_ms: None,
                percentiles_ms: p(p99 / 2.0, p99),
                hdr_base64: String::new(),
            };
            let spec = SloSpec {
                latency: vec![(Pct::P99, Duration::from_secs_f64(0.010 * scale))],
                errors: Some(0.01),
                rps: Some(90.0),
            };
            let rows = [
                row(1, 9.0 * scale, 0, 100.0),
                row(2, 11.0 * scale, 0, 100.0),
                row(3, 5.0 * scale, 2, 98.0),
                row(4, 5.0 * scale, 0, 80.0),
            ];
            let v = stage_verdicts(&spec, &rows);
            let passes: Vec<bool> = v.iter().map(|s| s.pass).collect();
            assert_eq!(passes, [true, false, false, false], "{scale}");
            let failing = |s: &StageVerdicts| {
                s.thresholds
                    .iter()
                    .filter(|t| !t.pass)
                    .map(|t| t.name.clone())
                    .collect::<Vec<_>>()
            };
            assert_eq!(failing(&v[1]), ["p99"]);
            assert_eq!(failing(&v[2]), ["errors"]);
            assert_eq!(failing(&v[3]), ["rps"]);
            assert!(stage_verdicts(&SloSpec::default(), &rows).is_empty());
        }
    }

    #[test]
    fn targets_are_written_as_they_are_read() {
        for text in [
            "p50=20ms,p99=250ms,errors=1%,rps=5000",
            "p99=250us",
            "p99.9=1500ms",
            "p10=7ns,errors=0.5%",
            "rps=2.5",
            "p99=3600s",
            "p99=0ms",
        ] {
            let s: SloSpec = text.parse().unwrap();
            assert_eq!(s.to_string(), text);
            assert_eq!(s.to_string().parse::<SloSpec>().unwrap(), s);
        }
        // Any other spelling is written in one form, which reads back the same.
        let s: SloSpec = "p99=0.25s, rps=300".parse().unwrap();
        assert_eq!(s.to_string(), "p99=250ms,rps=300");
    }

    #[test]
    fn parses_every_kind_of_target() {
        let s: SloSpec = "p99=250ms, p50=20ms,errors=0.5%,rps=5000,p99.9=1s"
            .parse()
            .unwrap();
        assert_eq!(
            s.latency,
            vec![
                (Pct::P50, Duration::from_millis(20)),
                (Pct::P99, Duration::from_millis(250)),
                (Pct::P999, Duration::from_secs(1)),
            ]
        );
        assert_eq!(s.errors, Some(0.005));
        assert_eq!(s.rps, Some(5000.0));
        assert_eq!(s.latency_ms()[1], (Pct::P99, 250.0));
    }

    #[test]
    fn rejects_with_a_reason() {
        for (bad, why) in [
            ("", "no target"),
            ("p99", "KEY=VALUE"),
            ("p98=1ms", "unknown target"),
            ("p99=fast", "p99:"),
            ("errors=1", "percentage"),
            ("errors=150%", "percentage"),
            ("rps=-3", "positive"),
            ("p99=1ms,p99=2ms", "twice"),
            (
                "p99=5ms,p50=10ms",
                "p99=5ms is below p50=10ms: a higher percentile",
            ),
        ] {
            let e = bad.parse::<SloSpec>().unwrap_err();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }

    #[test]
    fn verdicts_pass_and_fail() {
        let spec: SloSpec = "p50=20ms,p99=250ms,errors=1%,rps=5000".parse().unwrap();
        let pc = p(10.0, 300.0);
        let v = verdicts(
            &spec,
            &Measured {
                percentiles: &pc,
                error_rate: Some(0.02),
                rps: 6000.0,
            },
        );
        let got: Vec<(&str, bool)> = v.iter().map(|x| (x.name.as_str(), x.pass)).collect();
        assert_eq!(
            got,
            vec![
                ("p50", true),
                ("p99", false),
                ("errors", false),
                ("rps", true)
            ]
        );
        assert_eq!(v[2].measured, Some(2.0));
        assert_eq!(v[2].target, 1.0);
    }

    #[test]
    fn nothing_measured_fails() {
        let spec: SloSpec = "p99=1s,errors=1%".parse().unwrap();
        let none = Percentiles::default();
        let v = verdicts(
            &spec,
            &Measured {
                percentiles: &none,
                error_rate: None,
                rps: 0.0,
            },
        );
        assert!(v.iter().all(|x| !x.pass && x.measured.is_none()));
    }
}
