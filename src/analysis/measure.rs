//! The figures of a run that runs are compared on (`spate compare`, `--baseline`): each one's
//! key, unit and direction, and how it is read from a run's numbers. Typed only.

use serde::{Serialize, Serializer};

use super::Pct;
use crate::stats::Summary;

/// What is compared, in the order of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    Rps,
    Latency(Pct),
    /// Failed or >= 400 over attempted, in %: compared in percentage points.
    Errors,
    /// The requested connections that never got a response, in % of them: not opened, or (in
    /// the closed model, as the report's Unanswered line counts them) opened and never
    /// answered while the others were. Compared in percentage points.
    Unanswered,
    /// spate's own CPU time per completed response, in µs.
    Cpu,
}

/// As its key: "rps", "p50" ... "p99.9", "errors", "unanswered", "cpu".
impl Serialize for Measure {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.key())
    }
}

impl Measure {
    pub const ALL: [Measure; 8] = [
        Measure::Rps,
        Measure::Latency(Pct::P50),
        Measure::Latency(Pct::P90),
        Measure::Latency(Pct::P99),
        Measure::Latency(Pct::P999),
        Measure::Errors,
        Measure::Unanswered,
        Measure::Cpu,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Measure::Rps => "rps",
            Measure::Latency(p) => p.key(),
            Measure::Errors => "errors",
            Measure::Unanswered => "unanswered",
            Measure::Cpu => "cpu",
        }
    }

    /// The unit of its values: "req/s", "ms", "%" or "us".
    pub fn unit(self) -> &'static str {
        match self {
            Measure::Rps => "req/s",
            Measure::Latency(_) => "ms",
            Measure::Errors | Measure::Unanswered => "%",
            Measure::Cpu => "us",
        }
    }

    pub(super) fn higher_is_better(self) -> bool {
        self == Measure::Rps
    }

    /// Compared as a difference in percentage points, not as a ratio: a share that is often 0.
    pub fn in_points(self) -> bool {
        matches!(self, Measure::Errors | Measure::Unanswered)
    }

    /// This measure of a run; `None` where it has none.
    pub fn of(self, s: &Summary) -> Option<f64> {
        match self {
            Measure::Rps => Some(s.totals.requests_per_sec),
            Measure::Latency(p) => p.of(&s.latency.percentiles),
            Measure::Errors => {
                let r = &s.requests;
                let bad: u64 = s
                    .status_codes
                    .iter()
                    .filter(|c| c.code >= 400)
                    .map(|c| c.count)
                    .sum();
                (r.attempted > 0).then(|| 100.0 * (r.failed + bad) as f64 / r.attempted as f64)
            }
            Measure::Unanswered => {
                let c = &s.connections;
                let never = super::starved(c, s.config.rate.is_none()).map_or(0, |f| f.starved);
                (c.requested > 0)
                    .then(|| 100.0 * (never + c.not_opened.total()) as f64 / f64::from(c.requested))
            }
            Measure::Cpu => s
                .generator
                .cpu_s
                .filter(|_| s.requests.completed > 0)
                .map(|c| c * 1e6 / s.requests.completed as f64),
        }
    }

    /// How much worse `now` is than `base`: % of the baseline (for the rate, a fall; for the
    /// others, a rise), percentage points for errors; `None` from a baseline of 0.
    pub(super) fn worse_by(self, base: f64, now: f64) -> Option<f64> {
        match self {
            Measure::Errors | Measure::Unanswered => Some(now - base),
            _ if base <= 0.0 => None,
            Measure::Rps => Some(100.0 * (base - now) / base),
            Measure::Latency(_) | Measure::Cpu => Some(100.0 * (now - base) / base),
        }
    }
}
