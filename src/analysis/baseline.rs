//! `--baseline` and `--max-regression`: a run against one or more saved runs of the same test.
//! Each metric's baseline is the median of the saved runs (with their range); a gate fails when
//! the run is worse than that by more than its limit. Typed results only; the report words them.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{Measure, Pct};
use crate::stats::Summary;

/// `--max-regression`: the worsening each metric may show, in % (percentage points for errors).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Gates(pub Vec<(Measure, f64)>);

impl FromStr for Gates {
    type Err = String;

    /// "p99=10%,rps=5%,errors=1%".
    fn from_str(s: &str) -> Result<Gates, String> {
        let mut gates = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((key, value)) = part.split_once('=') else {
                return Err(format!(
                    "{part:?} is not METRIC=PERCENT (e.g. p99=10%, rps=5%, errors=1%)"
                ));
            };
            let (key, value) = (key.trim(), value.trim());
            let metric = match key {
                "rps" => Measure::Rps,
                "errors" => Measure::Errors,
                k => match Pct::ALL.iter().find(|p| p.key() == k) {
                    Some(p) => Measure::Latency(*p),
                    None => {
                        return Err(format!(
                            "unknown metric {k:?}; use p10 p25 p50 p75 p90 p95 p99 p99.9 p99.99, rps or errors"
                        ));
                    }
                },
            };
            if gates.iter().any(|(m, _)| *m == metric) {
                return Err(format!("{key} is given twice"));
            }
            let limit = value
                .strip_suffix('%')
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| format!("{key}: {value:?} is not a percentage such as 10%"))?;
            gates.push((metric, limit));
        }
        if gates.is_empty() {
            return Err("no gate given (e.g. p99=10%,rps=5%)".into());
        }
        Ok(Gates(gates))
    }
}

/// What of a saved run the comparison reads: its metrics and what it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The file it came from, as given.
    pub name: String,
    values: Vec<(Measure, Option<f64>)>,
    shape: Vec<(&'static str, String)>,
}

impl Sample {
    pub fn of(name: String, s: &Summary) -> Sample {
        let metrics = [Measure::Rps, Measure::Errors]
            .into_iter()
            .chain(Pct::ALL.map(Measure::Latency));
        Sample {
            name,
            values: metrics.map(|m| (m, m.of(s))).collect(),
            shape: shape(s),
        }
    }

    fn value(&self, m: Measure) -> Option<f64> {
        self.values.iter().find(|(k, _)| *k == m).and_then(|v| v.1)
    }
}

/// The settings that make two runs comparable, as short values.
fn shape(s: &Summary) -> Vec<(&'static str, String)> {
    let c = &s.config;
    vec![
        ("url", c.url.clone()),
        ("method", c.method.clone()),
        ("protocol", c.protocol.clone()),
        ("connections", c.connections.to_string()),
        (
            "model",
            c.rate
                .map_or_else(|| "closed".into(), |r| format!("open at {r} req/s")),
        ),
    ]
}

/// The run against its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The saved runs, as given.
    pub files: Vec<String>,
    pub rows: Vec<Delta>,
    /// Settings in which the run differs from a saved one.
    pub differences: Vec<Difference>,
}

/// One metric: the baseline (median of the saved runs, and their range), the run, the change,
/// and the gate if there is one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    /// "rps", "p50" ... "p99.99", "errors".
    pub metric: String,
    /// "req/s", "ms" or "%".
    pub unit: String,
    pub baseline: Option<f64>,
    pub baseline_min: Option<f64>,
    pub baseline_max: Option<f64>,
    pub now: Option<f64>,
    /// How much worse the run is: % of the baseline (percentage points for errors); negative is
    /// better. Null when either side has no value (or the baseline is 0).
    pub worse_by: Option<f64>,
    /// `--max-regression`'s limit for this metric, if gated.
    pub limit: Option<f64>,
    /// False only for a gate that failed, or one with nothing to compare.
    pub pass: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    pub setting: String,
    pub baseline: String,
    pub now: String,
}

impl Comparison {
    pub fn pass(&self) -> bool {
        self.rows.iter().all(|d| d.pass)
    }
}

/// The run `s` against `base` (at least one saved run), gated by `gates`.
pub fn compare(s: &Summary, base: &[Sample], gates: &Gates) -> Comparison {
    // Every figure compare shows but spate's own CPU, which says nothing of the server, and
    // the unanswered connections, which the run's own report states beside it.
    let mut metrics: Vec<Measure> = Measure::ALL
        .into_iter()
        .filter(|m| !matches!(m, Measure::Cpu | Measure::Unanswered))
        .collect();
    for (m, _) in &gates.0 {
        if !metrics.contains(m) {
            metrics.push(*m);
        }
    }
    let rows = metrics
        .into_iter()
        .map(|m| {
            let mut values: Vec<f64> = base.iter().filter_map(|b| b.value(m)).collect();
            values.sort_by(f64::total_cmp);
            let baseline = super::mann_whitney::median_of_sorted(&values);
            let now = m.of(s);
            let worse_by = baseline.zip(now).and_then(|(b, n)| m.worse_by(b, n));
            let limit = gates.0.iter().find(|(g, _)| *g == m).map(|g| g.1);
            Delta {
                metric: m.key().into(),
                unit: m.unit().into(),
                baseline,
                baseline_min: values.first().copied(),
                baseline_max: values.last().copied(),
                now,
                worse_by,
                limit,
                pass: match limit {
                    None => true,
                    Some(l) => worse_by.is_some_and(|w| w <= l),
                },
            }
        })
        .collect();
    let now = shape(s);
    let mut differences = Vec::new();
    for b in base {
        for ((setting, was), (_, is)) in b.shape.iter().zip(&now) {
            let known = differences
                .iter()
                .any(|d: &Difference| d.setting == *setting && d.baseline == *was);
            if was != is && !known {
                differences.push(Difference {
                    setting: (*setting).into(),
                    baseline: was.clone(),
                    now: is.clone(),
                });
            }
        }
    }
    Comparison {
        files: base.iter().map(|b| b.name.clone()).collect(),
        rows,
        differences,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(p50: f64, rps: f64, failed: u64) -> Summary {
        let plan = crate::plan::Plan::new(crate::target::Target::parse("http://a/").unwrap());
        let mut s = Summary::new(
            &plan,
            &crate::stats::RunOutput::empty(1),
            crate::stats::HISTOGRAM_BINS,
        );
        s.latency.percentiles.p50 = Some(p50);
        s.latency.percentiles.p99 = Some(p50 * 3.0);
        s.totals.requests_per_sec = rps;
        s.requests.attempted = 1000;
        s.requests.failed = failed;
        s
    }

    fn row<'a>(c: &'a Comparison, key: &str) -> &'a Delta {
        c.rows.iter().find(|d| d.metric == key).unwrap()
    }

    #[test]
    fn gates_parse_strictly() {
        let g: Gates = "p99=10%, rps=5%,errors=0.5%".parse().unwrap();
        assert_eq!(
            g.0,
            [
                (Measure::Latency(Pct::P99), 10.0),
                (Measure::Rps, 5.0),
                (Measure::Errors, 0.5)
            ]
        );
        for (bad, says) in [
            ("latency=5%", "unknown metric"),
            ("p99=10", "not a percentage"),
            ("p99=-1%", "not a percentage"),
            ("p99", "METRIC=PERCENT"),
            ("p99=1%,p99=2%", "twice"),
            ("", "no gate"),
        ] {
            let e = bad.parse::<Gates>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn worse_is_up_for_latency_and_errors_and_down_for_the_rate() {
        let base = [Sample::of("old.json".into(), &summary(5.0, 2000.0, 0))];
        let gates: Gates = "p50=20%,rps=5%,errors=1%".parse().unwrap();
        let slower = compare(&summary(10.0, 1000.0, 20), &base, &gates);
        assert_eq!(row(&slower, "p50").worse_by, Some(100.0));
        assert_eq!(row(&slower, "rps").worse_by, Some(50.0));
        assert_eq!(
            row(&slower, "errors").worse_by,
            Some(2.0),
            "percentage points"
        );
        assert!(!row(&slower, "p50").pass && !slower.pass());
        assert!(row(&slower, "p90").pass, "not gated");
        let faster = compare(&summary(4.0, 2500.0, 0), &base, &gates);
        assert_eq!(row(&faster, "rps").worse_by, Some(-25.0));
        assert!(faster.pass());
        let none = compare(&summary(4.0, 2500.0, 0), &base, &Gates::default());
        assert!(none.rows.iter().all(|d| d.limit.is_none() && d.pass));
    }

    #[test]
    fn several_baselines_give_their_median_and_range_and_a_gate_without_data_fails() {
        let base: Vec<Sample> = [5.0, 7.0, 6.0]
            .iter()
            .map(|&p| Sample::of(format!("{p}.json"), &summary(p, 1000.0, 0)))
            .collect();
        let c = compare(&summary(6.3, 1000.0, 0), &base, &"p50=5%".parse().unwrap());
        let d = row(&c, "p50");
        assert_eq!(
            (d.baseline, d.baseline_min, d.baseline_max),
            (Some(6.0), Some(5.0), Some(7.0))
        );
        assert!((d.worse_by.unwrap() - 5.0).abs() < 1e-9 && d.pass);
        let mut empty = summary(1.0, 0.0, 0);
        empty.latency.percentiles.p50 = None;
        let c = compare(&empty, &base, &"p50=5%".parse().unwrap());
        assert!(
            !row(&c, "p50").pass,
            "nothing to compare is no proof of no regression"
        );
    }

    #[test]
    fn differing_settings_are_named_once() {
        let mut other = summary(5.0, 1000.0, 0);
        other.config.connections = 100;
        let base = [
            Sample::of("a".into(), &other),
            Sample::of("b".into(), &other),
        ];
        let c = compare(&summary(5.0, 1000.0, 0), &base, &Gates::default());
        assert_eq!(
            c.differences,
            [Difference {
                setting: "connections".into(),
                baseline: "100".into(),
                now: summary(5.0, 1.0, 0).config.connections.to_string(),
            }]
        );
    }
}
